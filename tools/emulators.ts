/**
 * `npm run emulators`: this app's local stack alone, on the default addresses, until Ctrl-C: the devhost's
 * Service Bus (amqp 127.0.0.1:5672) and Cosmos DB (http://127.0.0.1:8081) emulators with the app's queues and
 * containers, and the remote services simulator (http://127.0.0.1:7081). For `func start`, several devhosts, or
 * any other client; local.settings.sample.json already points at these addresses.
 */
import { DEFAULT_COSMOS_PORT, DEFAULT_SERVICE_BUS_PORT } from "devhost";
import { AGENT_NAMES } from "../src/domain";
import { startLocalStack } from "./localStack";
import { DEFAULT_SIMULATOR_PORT } from "./simulator";

/** The first line printed once every emulator listens, which launchers wait for (a VS Code task does). */
export const EMULATORS_RUNNING = "Emulators running (Ctrl-C to stop):";

async function main(): Promise<void> {
  const stack = await startLocalStack({
    ports: {
      serviceBus: DEFAULT_SERVICE_BUS_PORT,
      cosmos: DEFAULT_COSMOS_PORT,
      simulator: DEFAULT_SIMULATOR_PORT,
    },
    log: (line) => console.log(`[servicebus] ${line}`),
  });
  const { serviceBusConnectionString, cosmosConnectionString, cosmosEndpoint, simulatorUrl } =
    stack.emulators;
  console.log(
    [
      EMULATORS_RUNNING,
      `  Service Bus  amqp://127.0.0.1:${DEFAULT_SERVICE_BUS_PORT}`,
      `    ServiceBusConnection=${serviceBusConnectionString}`,
      `  Cosmos DB    ${cosmosEndpoint}  (database ${stack.cosmos.database})`,
      `    CosmosConnection=${cosmosConnectionString}`,
      `  Simulator    ${simulatorUrl}  (${AGENT_NAMES.join(", ")}; GET /_ledger, POST /_faults)`,
      `    REMOTE_SERVICES_URL=${simulatorUrl}`,
    ].join("\n"),
  );
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log("Stopping emulators...");
    void stack.stop().then(() => process.exit(0));
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
