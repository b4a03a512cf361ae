// Start-up phase 2: the emulators the settings point at. Either the host starts the embedded ones where nothing
// listens yet, or the caller names emulators it runs; either way the app's loopback connection strings are
// pointed at them. It returns the Service Bus emulator it started, if any, for the check of the app's queues
// (undeclaredQueues.ts).
import path from "node:path";
import {
  planEmulators,
  settingsForEmulators,
  type EmulatorAddresses,
  type StartEmulators,
} from "../emulatorPlan";
import type { EmulatorClock } from "../emulators/servicebus/wallClockTimer";
import type { HostLogger } from "../logger";
import { applySettingsToEnv } from "../settings";
import type { EmbeddedServiceBus } from "./undeclaredQueues";
import type { ShutdownSteps } from "./shutdown";

/** The embedded emulators, loaded only when an app needs them: --no-emulators never loads rhea. */
const startEmbeddedEmulators: StartEmulators = async (request) => {
  const { startEmulators } = await import("../emulators/index.js");
  return startEmulators(request);
};

export interface EmulatorOptions {
  appRoot: string;
  /** false: none; true: start what the settings point at; addresses: emulators the caller runs. */
  emulators?: boolean | EmulatorAddresses;
  startEmulators?: StartEmulators;
  /** The Service Bus emulator's time (a time-skipping host's clock); default the wall clock. */
  clock?: EmulatorClock;
}

export async function connectEmulators(
  options: EmulatorOptions,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): Promise<EmbeddedServiceBus | undefined> {
  const { emulators } = options;
  if (emulators && typeof emulators === "object") {
    shutdown.push(applySettingsToEnv({}, settingsForEmulators(emulators)));
    return undefined;
  }
  if (emulators !== true) return undefined;
  const plan = await planEmulators(process.env, options.appRoot);
  plan.notes.forEach((note) => logger.info(note));
  if (!plan.request.serviceBus && !plan.request.cosmos) return undefined;
  const started = await (options.startEmulators ?? startEmbeddedEmulators)({
    ...plan.request,
    ...(options.clock ? { clock: options.clock } : {}),
    log: (line) => logger.write({ level: "debug", category: "system", message: line }),
  });
  shutdown.push(() => started.stop());
  shutdown.push(applySettingsToEnv({}, settingsForEmulators(started)));
  const config = plan.request.serviceBusConfig;
  return started.serviceBusConnectionString
    ? {
        connectionString: started.serviceBusConnectionString,
        configFile: typeof config === "string" ? path.resolve(options.appRoot, config) : undefined,
      }
    : undefined;
}
