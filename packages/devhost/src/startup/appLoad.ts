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
  /**
   * With HTTP streaming on (app.setup({ enableHttpStream: true })): the worker's own HTTP server, which the
   * library started and named in the capability HttpUri, where HTTP requests are forwarded (triggers/httpStream.ts).
   */
  workerHttpUri?: URL;
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
  const workerHttpUri = await askCapabilities(logger);
  const listed = hostConfig.functions?.map((name) => name.toLowerCase());
  const registrations = [...app.functions.values()].filter(
    (r) => !listed || listed.includes(r.name.toLowerCase()),
  );
  return { app, registrations, ...(workerHttpUri ? { workerHttpUri } : {}) };
}

/**
 * The worker asks the programming model for its capabilities once the entry has loaded, which also locks
 * app.setup(). With HTTP streaming on, @azure/functions starts its HTTP server there and reports its address as
 * HttpUri (ProgrammingModel.ts, http/httpProxy.ts setupHttpProxy in the library's source): the host forwards HTTP
 * requests to it from then on.
 */
async function askCapabilities(logger: HostLogger): Promise<URL | undefined> {
  const capabilities = (await findProgrammingModel()?.getCapabilities?.({})) ?? {};
  if (!capabilities.HttpUri) return undefined;
  const uri = new URL(capabilities.HttpUri);
  logger.info(`HTTP streaming is on: requests go to the worker's HTTP server at ${uri.href}.`);
  return uri;
}
