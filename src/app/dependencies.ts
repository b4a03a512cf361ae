import type { Container, CosmosClient } from "@azure/cosmos";
import type { ServiceBusClient } from "@azure/service-bus";
import { getConfig, type AppConfig } from "../config";
import { defaultWorkflows, type AgentName, type WorkflowRegistry } from "../domain";
import { cosmosContainers } from "../services/cosmos";
import { OrderStore } from "../services/orderStore";
import { RemoteServiceClient, breakerFor } from "../services/remoteService";
import { Messaging, createServiceBusClient } from "../services/serviceBus";
import { StateStore } from "../services/stateStore";
import { appWorkflows } from "./workflows";

/**
 * Everything a function needs, built once per process on first use (the SDK clients pool connections; building
 * them per invocation would cost a TLS and AMQP handshake each time). Functions receive it as a parameter, so
 * tests can build one against the embedded emulators.
 */
export interface Dependencies {
  config: AppConfig;
  cosmos: CosmosClient;
  serviceBus: ServiceBusClient;
  states: StateStore;
  orders: OrderStore;
  leases: Container;
  messaging: Messaging;
  workflows: WorkflowRegistry;
  remote(agent: AgentName): RemoteServiceClient;
  now(): Date;
}

export function createDependencies(
  config: AppConfig,
  workflows: WorkflowRegistry = defaultWorkflows(),
): Dependencies {
  const containers = cosmosContainers(config);
  const serviceBus = createServiceBusClient(config.serviceBus);
  const remotes = new Map<AgentName, RemoteServiceClient>();
  return {
    config,
    cosmos: containers.client,
    serviceBus,
    states: new StateStore(containers.state),
    orders: new OrderStore(containers.orders),
    leases: containers.leases,
    messaging: new Messaging(serviceBus, config.statusQueues),
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
    now: () => new Date(),
  };
}

let shared: Dependencies | undefined;

/** The process-wide dependencies of the deployed app, with the workflow versions registered at start-up. */
export function dependencies(): Dependencies {
  shared ??= createDependencies(getConfig(), appWorkflows());
  return shared;
}
