// Start-up phase 6: the HTTP server, with the app's routes, the durable HTTP API's webhooks (at
// /runtime/webhooks/durabletask/, where management URLs point, behind the system key) and the admin API
// (/admin/functions/, and /admin/warmup for the warmup function) mounted on it, and beside it the durable
// extension's local RPC endpoint (durableApi.ts).
// Once they listen the host knows its own addresses: the durable client's binding data, WEBSITE_HOSTNAME and the
// function listing name them.
import { encodeClientPrincipal, type ClientPrincipal } from "../auth";
import { WEBHOOK_PATH } from "../durable/webhooks";
import type { Registration } from "../functionsCore";
import type { HostLogger } from "../logger";
import { applySettingsToEnv } from "../settings";
import { requestBodyLimit } from "../triggers/bodyLimit";
import { startHttpServer, type HttpFunction, type RunningHttpServer } from "../triggers/http";
import { WARMUP_PATH, warmupEndpoint } from "../triggers/warmup";
import { WorkerHttpProxy } from "../triggers/httpStream";
import { adminFunctionsApi } from "./adminApi";
import { durableWebhooks, startDurableRpcEndpoint } from "./durableApi";
import type { HostRuntime } from "./runtime";
import type { ShutdownSteps } from "./shutdown";
import type { Triggers } from "./triggers";

export interface HttpServerOptions {
  host: string;
  port: number;
  routePrefix: string;
  registrations: readonly Registration[];
  triggers: Triggers;
  runtime: HostRuntime;
  /** Added to every request that carries no x-ms-client-principal. */
  signedInAs: ClientPrincipal | null;
  /** The durable webhooks' system key (systemKeys.ts). */
  durableKey: string;
  /** The worker's HTTP server, when the app streams HTTP (appLoad.ts). */
  workerHttpUri?: URL;
}

export async function serveHttp(
  options: HttpServerOptions,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): Promise<RunningHttpServer> {
  const { runtime, triggers, signedInAs } = options;
  const workerHttp = options.workerHttpUri ? new WorkerHttpProxy(options.workerHttpUri) : undefined;
  // Pushed before the server's stop, so it runs after it: requests still relayed keep their connections till then.
  if (workerHttp) shutdown.push(() => workerHttp.close());
  const server = await startHttpServer({
    host: options.host,
    port: options.port,
    routePrefix: options.routePrefix,
    functions: triggers.httpFunctions,
    invoke: runtime.invoke,
    logger,
    maxBodyBytes: requestBodyLimit(process.env, (message) => logger.warn(message)),
    ...(workerHttp ? { workerHttp } : {}),
    ...(signedInAs ? { defaultHeaders: encodeClientPrincipal(signedInAs) } : {}),
    mounts: {
      [WEBHOOK_PATH]: durableWebhooks(runtime.engine, options.durableKey),
      "/admin/functions/": adminFunctionsApi(options.registrations, triggers.timers, runtime.invoke),
      [WARMUP_PATH]: warmupEndpoint(triggers.warmup),
    },
  });
  shutdown.push(() => server.stop());
  const rpc = await startDurableRpcEndpoint(runtime.engine, () => server.url, logger);
  shutdown.push(() => rpc.stop());
  runtime.setBaseUrl(server.url, rpc.url);
  // The durable client rewrites its status URLs to localhost:7071 unless the host names itself.
  shutdown.push(applySettingsToEnv({ WEBSITE_HOSTNAME: new URL(server.url).host }));
  for (const fn of triggers.httpFunctions) {
    const summary = triggers.summaries.find((s) => s.name === fn.registration.name);
    if (summary) summary.description = describeHttp(fn, server.url);
  }
  return server;
}

function describeHttp(fn: HttpFunction, url: string): string {
  const methods = fn.methods ? `[${[...fn.methods].join(",")}]` : "[ALL]";
  return `${methods} ${url}${fn.displayRoute}`;
}
