/**
 * The local stack for soak runs, the demo and the benchmarks: the three emulators in this process (Service Bus,
 * Cosmos DB, the remote services simulator), each on an ephemeral port, and the app settings that point a
 * devhost at them. The app itself runs in another process (appProcess.ts), so that it can be killed and
 * restarted while the emulators, which keep everything in memory, stay up.
 */
import fs from "node:fs";
import path from "node:path";
import type { IncomingMessage } from "node:http";
import { startCosmosEmulator, type CosmosEmulator } from "../emulators/cosmos";
import { ServiceBusEmulator } from "../emulators/servicebus";
import { startSimulator, type Simulator } from "../simulator";

export interface LocalStackOptions {
  /** Seeds the simulator's probability faults; default Math.random. */
  random?: () => number;
  /** Sees every request to the Cosmos DB stand-in (the benchmarks count them). */
  onCosmosRequest?: (request: IncomingMessage) => void;
}

export interface LocalStack {
  serviceBus: ServiceBusEmulator;
  cosmos: CosmosEmulator;
  simulator: Simulator;
  /**
   * The shipped settings (local.settings.sample.json) with every connection pointed at this stack and
   * `overrides` applied last.
   */
  appSettings(overrides?: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

/** The nearest directory at or above `from` holding package.json: the repository, from sources or dist. */
export function repositoryRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

function sampleSettings(): Record<string, string> {
  const file = path.join(repositoryRoot(), "local.settings.sample.json");
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { Values?: Record<string, string> };
  if (!parsed.Values) throw new Error(`${file} has no "Values"`);
  return parsed.Values;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const next of stops.splice(0).reverse()) await next().catch(() => undefined);
  };
  try {
    const serviceBus = new ServiceBusEmulator({ port: 0 });
    await serviceBus.start();
    stops.push(() => serviceBus.stop());
    const cosmos = await startCosmosEmulator({
      port: 0,
      ...(options.onCosmosRequest ? { onRequest: options.onCosmosRequest } : {}),
    });
    stops.push(() => cosmos.stop());
    const simulator = await startSimulator({
      port: 0,
      ...(options.random ? { random: options.random } : {}),
    });
    stops.push(() => simulator.stop());
    return {
      serviceBus,
      cosmos,
      simulator,
      appSettings: (overrides = {}) => ({
        ...sampleSettings(),
        ServiceBusConnection: serviceBus.connectionString,
        CosmosConnection: cosmos.connectionString,
        COSMOS_DATABASE: cosmos.database,
        INVENTORY_URL: simulator.serviceUrls.inventory,
        PAYMENT_URL: simulator.serviceUrls.payment,
        SHIPPING_URL: simulator.serviceUrls.shipping,
        ...overrides,
      }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
