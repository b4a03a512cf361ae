/**
 * The app's dependencies wired to the local stack on ephemeral ports: what integration tests of the Scheduler,
 * Supervisor and agents run against. Real SDK clients, real emulators, no test doubles.
 */
import { InvocationContext } from "@azure/functions";
import { ServiceBusClient } from "@azure/service-bus";
import { createDependencies, type Dependencies, type DependencyOptions } from "../../src/app/dependencies";
import { loadConfig, type AppConfig } from "../../src/config";
import { cosmosContainers } from "../../src/store/cosmos";
import { startLocalStack, type LocalStackAddresses, type LocalStackOptions } from "../../tools/localStack";

export interface AppStack {
  emulators: LocalStackAddresses;
  config: AppConfig;
  deps: Dependencies;
  /** The store's containers through a client of the test's own (leases, state), for reading and seeding records. */
  containers: ReturnType<typeof cosmosContainers>;
  /** A second client for the test itself (reading alerts, status queues, dead letters). */
  bus: ServiceBusClient;
  context(name?: string): InvocationContext;
  /**
   * Another set of dependencies on the same emulators, with `overrides` on top of the stack's settings: what a
   * second app configured differently would use (closed by stop()).
   */
  dependencies(overrides: Record<string, string>, options?: DependencyOptions): Dependencies;
  stop(): Promise<void>;
}

export async function startAppStack(
  settings: Record<string, string> = {},
  /** What the stack itself is started with: e.g. `onCosmosRequest`, to count the store requests of a call. */
  options: Pick<LocalStackOptions, "onCosmosRequest" | "onCosmosResponse"> = {},
): Promise<AppStack> {
  const stack = await startLocalStack(options);
  const config = loadConfig(stack.appSettings(settings));
  const deps = createDependencies(config);
  const bus = new ServiceBusClient(stack.emulators.serviceBusConnectionString);
  const containers = cosmosContainers(config);
  const others: Dependencies[] = [];
  return {
    emulators: stack.emulators,
    config,
    deps,
    containers,
    bus,
    context: (name = "test") =>
      new InvocationContext({ functionName: name, invocationId: `${name}-${Date.now()}` }),
    dependencies: (overrides, options = {}) => {
      const other = createDependencies(
        loadConfig(stack.appSettings({ ...settings, ...overrides })),
        undefined,
        options,
      );
      others.push(other);
      return other;
    },
    stop: async () => {
      for (const other of others) await other.close();
      await deps.close();
      containers.client.dispose();
      await bus.close();
      await stack.stop();
    },
  };
}

/** Receives what is waiting on a queue right now (receive-and-delete), bodies only. */
export async function drain(bus: ServiceBusClient, queue: string, max = 100): Promise<unknown[]> {
  const receiver = bus.createReceiver(queue, { receiveMode: "receiveAndDelete" });
  try {
    const messages = await receiver.receiveMessages(max, { maxWaitTimeInMs: 300 });
    return messages.map((m) => m.body as unknown);
  } finally {
    await receiver.close();
  }
}
