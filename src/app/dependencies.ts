import { getConfig, type AppConfig } from "../config";
import { defaultWorkflows, type AgentName, type WorkflowRegistry } from "../domain";
import { cosmosContainers } from "../services/cosmos";
import { HealthProbe } from "../services/health";
import { LeaseManager } from "../services/lease";
import { Notifications } from "../services/notifications";
import { OrderStore } from "../services/orderStore";
import { RemoteServiceClient, breakerFor } from "../services/remoteService";
import { Messaging, createServiceBusClient } from "../services/serviceBus";
import { StateStore } from "../services/stateStore";
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
  orders: OrderStore;
  leases: LeaseManager;
  messaging: Messaging;
  notifications: Notifications;
  health: HealthProbe;
  workflows: WorkflowRegistry;
  remote(agent: AgentName): RemoteServiceClient;
  now(): Date;
  /** Closes the SDK clients: for tests and tools that build their own, never needed by the host. */
  close(): Promise<void>;
}

export function createDependencies(
  config: AppConfig,
  workflows: WorkflowRegistry = defaultWorkflows(),
): Dependencies {
  const containers = cosmosContainers(config);
  const serviceBus = createServiceBusClient(config.serviceBus);
  const messaging = new Messaging(serviceBus, config.statusQueues);
  const now = () => new Date();
  const remotes = new Map<AgentName, RemoteServiceClient>();
  return {
    config,
    states: new StateStore(containers.state),
    orders: new OrderStore(containers.orders),
    leases: new LeaseManager(containers.leases),
    messaging,
    notifications: new Notifications(messaging, now),
    health: new HealthProbe(containers.client, config.cosmosDatabase, serviceBus),
    workflows,
    remote(agent) {
      let client = remotes.get(agent);
      if (!client) {
        client = new RemoteServiceClient(config.serviceUrls[agent], {
          maxAttempts: config.agentMaxAttempts,
          attemptTimeoutMs: config.agentAttemptTimeoutSeconds * 1000,
          breaker: breakerFor(agent),
        });
        remotes.set(agent, client);
      }
      return client;
    },
    now,
    async close() {
      await messaging.close();
      await serviceBus.close();
      containers.client.dispose();
    },
  };
}

let shared: Dependencies | undefined;

/** The process-wide dependencies of the deployed app, with the workflow versions registered at start-up. */
export function dependencies(): Dependencies {
  shared ??= createDependencies(getConfig(), appWorkflows());
  return shared;
}
