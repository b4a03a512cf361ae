// Start-up phase 3: the app's registrations, captured through the @azure/functions-core stand-in as the worker
// captures them, limited to host.json "functions" when it lists some.
import {
  findProgrammingModel,
  loadApp,
  setSystemLogSink,
  unloadApp,
  type LoadedApp,
  type Registration,
} from "../functionsCore";
import type { HostLogger } from "../logger";
import type { HostConfig } from "../settings";
import type { ShutdownSteps } from "./shutdown";

export interface LoadedRegistrations {
  app: LoadedApp;
  /** The functions to run: all, or those host.json names. */
  registrations: Registration[];
}

export async function loadRegistrations(
  appEntry: string,
  hostConfig: HostConfig,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): Promise<LoadedRegistrations> {
  setSystemLogSink((level, message) =>
    logger.write({ level: level === "none" ? "trace" : level, category: "system", message }),
  );
  logger.info(`Loading ${appEntry}`);
  const app = await loadApp(appEntry);
  shutdown.push(() => unloadApp(app));
  if (app.functions.size === 0) {
    logger.warn(
      `No functions found in ${appEntry}: it registered nothing through @azure/functions (v4 model).`,
    );
  }
  await refuseHttpStreaming();
  const listed = hostConfig.functions?.map((name) => name.toLowerCase());
  const registrations = [...app.functions.values()].filter(
    (r) => !listed || listed.includes(r.name.toLowerCase()),
  );
  return { app, registrations };
}

/**
 * The worker asks the programming model for its capabilities once the entry has loaded; that also locks
 * app.setup(). HTTP streaming would need the worker's HTTP proxy protocol, which the devhost does not speak.
 */
async function refuseHttpStreaming(): Promise<void> {
  const capabilities = (await findProgrammingModel()?.getCapabilities?.({})) ?? {};
  if (capabilities.HttpUri) {
    throw new Error(
      "The app enables HTTP streaming (app.setup({ enableHttpStream: true })), which the devhost does not support.",
    );
  }
}
