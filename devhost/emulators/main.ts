/**
 * The three local stand-ins together: Service Bus (AMQP 1.0), Cosmos DB (HTTP) and the remote services
 * simulator. The devhost starts the ones its settings point at; `npm run emulators` runs all three alone, on the
 * default addresses of DESIGN §7, for `func start` or any other client.
 */
import { startCosmosEmulator, DEFAULT_COSMOS_PORT, type CosmosEmulator } from "./cosmos";
import { ServiceBusEmulator, DEFAULT_PORT as DEFAULT_SERVICE_BUS_PORT } from "./servicebus";
import { startSimulator, DEFAULT_SIMULATOR_PORT, type Simulator } from "../simulator";

export interface StartEmulatorsRequest {
  serviceBus?: boolean;
  cosmos?: boolean;
  simulator?: boolean;
  /** 0 picks an ephemeral port (tests). */
  ports?: { serviceBus?: number; cosmos?: number; simulator?: number };
  host?: string;
  /** Path of a Service Bus Config.json; default devhost/emulators/servicebus/config.json. */
  serviceBusConfig?: string;
  log?: (line: string) => void;
}

export interface EmulatorHandles {
  serviceBusConnectionString?: string;
  cosmosConnectionString?: string;
  cosmosEndpoint?: string;
  simulatorUrl?: string;
  stop(): Promise<void>;
}

/** Starts the requested emulators (all by default); if one fails to start, the others are stopped again. */
export async function startEmulators(request: StartEmulatorsRequest = {}): Promise<EmulatorHandles> {
  const host = request.host ?? "127.0.0.1";
  const stops: Array<() => Promise<void>> = [];
  const handles: EmulatorHandles = {
    stop: async () => {
      await Promise.allSettled(stops.reverse().map((stop) => stop()));
    },
  };
  try {
    if (request.serviceBus ?? true) {
      const bus = new ServiceBusEmulator({
        host,
        port: request.ports?.serviceBus ?? DEFAULT_SERVICE_BUS_PORT,
        ...(request.serviceBusConfig ? { config: request.serviceBusConfig } : {}),
        ...(request.log ? { log: request.log } : {}),
      });
      await bus.start();
      stops.push(() => bus.stop());
      handles.serviceBusConnectionString = bus.connectionString;
    }
    if (request.cosmos ?? true) {
      const cosmos: CosmosEmulator = await startCosmosEmulator({
        host,
        port: request.ports?.cosmos ?? DEFAULT_COSMOS_PORT,
      });
      stops.push(() => cosmos.stop());
      handles.cosmosConnectionString = cosmos.connectionString;
      handles.cosmosEndpoint = cosmos.endpoint;
    }
    if (request.simulator ?? true) {
      const simulator: Simulator = await startSimulator({
        host,
        port: request.ports?.simulator ?? DEFAULT_SIMULATOR_PORT,
      });
      stops.push(() => simulator.stop());
      handles.simulatorUrl = simulator.url;
    }
  } catch (error) {
    await handles.stop();
    throw error;
  }
  return handles;
}

/** `npm run emulators`: all three on their default addresses until Ctrl-C. */
async function main(): Promise<void> {
  const handles = await startEmulators({ log: (line) => console.log(`[servicebus] ${line}`) });
  console.log(
    [
      "Emulators running (Ctrl-C to stop):",
      `  Service Bus  amqp://127.0.0.1:${DEFAULT_SERVICE_BUS_PORT}`,
      `    ServiceBusConnection=${handles.serviceBusConnectionString}`,
      `  Cosmos DB    ${handles.cosmosEndpoint}`,
      `    CosmosConnection=${handles.cosmosConnectionString}`,
      `  Simulator    ${handles.simulatorUrl}  (inventory, payment, shipping; GET /_ledger, POST /_faults)`,
      `    INVENTORY_URL=${handles.simulatorUrl}/inventory PAYMENT_URL=${handles.simulatorUrl}/payment SHIPPING_URL=${handles.simulatorUrl}/shipping`,
    ].join("\n"),
  );
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log("Stopping emulators...");
    void handles.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
