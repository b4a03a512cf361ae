import { getConfig, type AppConfig } from "../config";
import { AdmissionPlaces } from "../coordination/admissionShards";
import { defaultWorkflows, type AgentName, type WorkflowRegistry } from "../domain";
import { cosmosContainers } from "../store/cosmos";
import { HealthProbe } from "./health";
import { LeaseManager } from "../coordination/supervisorLease";
import { Notifications } from "../messaging/notifications";
import { OrderStore } from "../store/orderStore";
import { BacklogGauge } from "../coordination/backlog";
import { ServiceBreaker } from "../remote/sharedBreaker";
import { holdsSupervisorLease, observeOrdersPerState, recordStateWrite } from "../telemetry/metrics";
import { ChaosInjector } from "../remote/chaosInjector";
import { Checkpoint } from "../store/checkpoint";
import { InfraFaults } from "../resilience/infraFaultLog";
import { RemoteServiceClient } from "../remote/remoteService";
import { Messaging, createServiceBusClient } from "../messaging/serviceBus";
import { StateStore } from "../store/stateStore";
import { SetAsideBodies } from "../store/setAsideBodies";
import { SUBMISSION_CHECK } from "../supervisor/submissionCheck";
import { appWorkflows } from "./workflows";

/**
 * Everything the roles use, built once per process on first use by the composition root below (the SDK clients
 * pool connections; building them per invocation would cost a TLS and AMQP handshake each time). No role gets an
 * SDK client: each takes the slice of this it needs (`Pick<Dependencies, ...>`), so tests build exactly that
 * against the embedded emulators.
 */
export interface Dependencies {
  config: AppConfig;
  states: StateStore;
  /** The MAX_IN_FLIGHT places, in shard documents of the leases container: taken before a claim, given back
   * by the write that ends the attempt's lock. */
  admission: AdmissionPlaces;
  orders: OrderStore;
  leases: LeaseManager;
  /** How far the Supervisor has checked that every stored order has a state record (supervisor/submissions.ts). */
  submissionsChecked: Checkpoint;
  /** What the instances saw of the app's own store and bus failing: the Supervisor does not count those. */
  infraFaults: InfraFaults;
  /** The Pending backlog the front door checks against MAX_PENDING_BACKLOG, counted at most once a second. */
  backlog: BacklogGauge;
  messaging: Messaging;
  /** The full bodies of refused messages too large to set aside whole on rejected-messages. */
  setAsideBodies: SetAsideBodies;
  notifications: Notifications;
  health: HealthProbe;
  workflows: WorkflowRegistry;
  remote(agent: AgentName): RemoteServiceClient;
  /** The shared circuit breaker of each remote service (one record per service in the leases container). */
  breaker(agent: AgentName): ServiceBreaker;
  now(): Date;
  /** Closes the SDK clients: for tests and tools that build their own, never needed by the host. */
  close(): Promise<void>;
}

export interface DependencyOptions {
  /**
   * Where chaos draws its decisions from (CHAOS_*): Math.random unless given; tests pass a seeded generator so
   * that a run injects into the same attempts every time.
   */
  random?: () => number;
}

export function createDependencies(
  config: AppConfig,
  workflows: WorkflowRegistry = defaultWorkflows(),
  options: DependencyOptions = {},
): Dependencies {
  const now = () => new Date();
  // Late-bound: the record of faults lives in the store whose faults it records.
  const containers = cosmosContainers(config, (fault) => infraFaults.note("store", fault));
  // The dependencies' clock as it is now (tests move it).
  const infraFaults = new InfraFaults(containers.leases, () => built.now());
  const serviceBus = createServiceBusClient(config.serviceBus);
  const messaging = new Messaging(serviceBus, config.statusQueues, (fault) => infraFaults.note("bus", fault));
  const remotes = new Map<AgentName, RemoteServiceClient>();
  const breakers = new Map<AgentName, ServiceBreaker>();
  // The store gives an attempt's place back after each write that ends its lock; a give-back that fails is
  // logged and left to the shard's check (src/coordination/admissionShards.ts): the state write itself has landed.
  const states: StateStore = new StateStore(
    containers.state,
    async (before) => {
      if (before.admissionShard === null) return;
      await admission
        .giveBack(before.admissionShard, { ended: [before.lockedBy!] })
        .catch((error: unknown) =>
          console.warn(`admission: could not give back the place of ${before.lockedBy} (${String(error)})`),
        );
    },
    recordStateWrite,
  );
  const admission = new AdmissionPlaces(containers.leases, {
    maxInFlight: config.maxInFlight,
    claimTimeoutSeconds: config.claimTimeoutSeconds,
    states,
    // Late-bound: the clock of the dependencies as they are now (tests move it).
    now: () => built.now(),
  });
  const notifications = new Notifications(messaging, now);
  const random = options.random ?? Math.random;
  /** The chaos strategy of `agent`'s pipeline: only while chaos is on and names the service. */
  const chaosFor = (agent: AgentName): ChaosInjector | undefined =>
    config.chaos?.services.includes(agent) ? new ChaosInjector(agent, config.chaos, random) : undefined;
  const breaker = (agent: AgentName): ServiceBreaker => {
    let b = breakers.get(agent);
    if (!b) {
      b = new ServiceBreaker(agent, {
        container: containers.leases,
        settings: {
          openSeconds: config.breakerOpenSeconds,
          callTimeoutSeconds: config.agentAttemptTimeoutSeconds,
        },
        notifications,
        counts: {
          waiting: () => states.count(["Pending", "Processing", "CompensationPending", "Compensating"]),
          parked: () => states.countParked(),
          outlasted: (since) => states.countOutlasted(since),
        },
        now,
      });
      breakers.set(agent, b);
    }
    return b;
  };
  const built: Dependencies = {
    config,
    states,
    admission,
    orders: new OrderStore(containers.orders),
    leases: new LeaseManager(containers.leases),
    submissionsChecked: new Checkpoint(containers.leases, SUBMISSION_CHECK.checkpoint),
    infraFaults,
    backlog: new BacklogGauge(states, now),
    messaging,
    setAsideBodies: new SetAsideBodies(containers.rejected),
    notifications,
    health: new HealthProbe(containers.client, config.cosmosDatabase, serviceBus),
    workflows,
    remote(agent) {
      let client = remotes.get(agent);
      if (!client) {
        client = new RemoteServiceClient(config.serviceUrls[agent], {
          service: agent,
          maxAttempts: config.agentMaxAttempts,
          attemptTimeoutMs: config.agentAttemptTimeoutSeconds * 1000,
          breaker: breaker(agent),
          chaos: chaosFor(agent),
        });
        remotes.set(agent, client);
      }
      return client;
    },
    breaker,
    now,
    async close() {
      await messaging.close();
      await serviceBus.close();
      containers.client.dispose();
    },
  };
  return built;
}

let shared: Dependencies | undefined;

/** The process-wide dependencies of the deployed app, with the workflow versions registered at start-up. */
export function dependencies(): Dependencies {
  if (!shared) {
    const deps = createDependencies(getConfig(), appWorkflows());
    // Counted by one instance only, the Supervisor's leader, at each export of the metrics.
    observeOrdersPerState(() => (holdsSupervisorLease(Date.now()) ? deps.states.countByState() : undefined));
    shared = deps;
  }
  return shared;
}
