/**
 * The app's dependencies wired to the embedded emulators on ephemeral ports: what integration tests of the
 * Scheduler, Supervisor and agents run against. Real SDK clients, real emulators, no test doubles.
 */
import { readFileSync } from "node:fs";
import { InvocationContext } from "@azure/functions";
import { ServiceBusClient } from "@azure/service-bus";
import { createDependencies, type Dependencies } from "../../src/app/dependencies";
import { loadConfig, type AppConfig } from "../../src/config";
import { startEmulators, type EmulatorHandles } from "../../devhost/emulators/main";

export interface AppStack {
  emulators: EmulatorHandles;
  config: AppConfig;
  deps: Dependencies;
  /** A second client for the test itself (reading alerts, status queues, dead letters). */
  bus: ServiceBusClient;
  context(name?: string): InvocationContext;
  stop(): Promise<void>;
}

const sample = JSON.parse(readFileSync("local.settings.sample.json", "utf8")) as {
  Values: Record<string, string>;
};

export async function startAppStack(settings: Record<string, string> = {}): Promise<AppStack> {
  const emulators = await startEmulators({ ports: { serviceBus: 0, cosmos: 0, simulator: 0 } });
  const sim = emulators.simulatorUrl!;
  const config = loadConfig({
    ...sample.Values,
    ServiceBusConnection: emulators.serviceBusConnectionString,
    CosmosConnection: emulators.cosmosConnectionString,
    INVENTORY_URL: `${sim}/inventory`,
    PAYMENT_URL: `${sim}/payment`,
    SHIPPING_URL: `${sim}/shipping`,
    ...settings,
  });
  const deps = createDependencies(config);
  const bus = new ServiceBusClient(emulators.serviceBusConnectionString!);
  return {
    emulators,
    config,
    deps,
    bus,
    context: (name = "test") =>
      new InvocationContext({ functionName: name, invocationId: `${name}-${Date.now()}` }),
    stop: async () => {
      await deps.close();
      await bus.close();
      await emulators.stop();
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
