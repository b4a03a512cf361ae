/**
 * The embedded emulators: Service Bus (AMQP 1.0) and Cosmos DB (HTTP). The devhost starts the ones an app's
 * settings point at; `startEmulators` also serves anyone who wants them on their own (tests, a local stack).
 * This module loads rhea and the Cosmos DB stand-in, so the devhost imports it only when it needs it.
 */
import { startCosmosEmulator } from "./cosmos";
import { DEFAULT_COSMOS_PORT, DEFAULT_SERVICE_BUS_PORT } from "./ports";
import { ServiceBusEmulator } from "./servicebus";
import type { EmulatorHandles, StartEmulatorsRequest } from "../emulatorPlan";

export * from "./cosmos";
export * from "./servicebus";
export * from "./ports";
export type { EmulatorAddresses, EmulatorHandles, StartEmulatorsRequest } from "../emulatorPlan";

/** Starts the requested emulators (both by default); if one fails to start, the other is stopped again. */
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
        ...(request.clock ? { clock: request.clock } : {}),
      });
      await bus.start();
      stops.push(() => bus.stop());
      handles.serviceBusConnectionString = bus.connectionString;
    }
    if (request.cosmos ?? true) {
      const cosmos = await startCosmosEmulator({
        host,
        port: request.ports?.cosmos ?? DEFAULT_COSMOS_PORT,
        ...(request.cosmosConfig ? { config: request.cosmosConfig } : {}),
        ...(request.onCosmosRequest ? { onRequest: request.onCosmosRequest } : {}),
        ...(request.onCosmosResponse ? { onResponse: request.onCosmosResponse } : {}),
      });
      stops.push(() => cosmos.stop());
      handles.cosmosConnectionString = cosmos.connectionString;
      handles.cosmosEndpoint = cosmos.endpoint;
    }
  } catch (error) {
    await handles.stop();
    throw error;
  }
  return handles;
}
