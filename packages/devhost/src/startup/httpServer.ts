// Start-up phase 6: the HTTP server, with the app's routes, the durable HTTP API (at /runtime/webhooks/durabletask/,
// where management URLs point, and at /durabletask/, the durable client's rpcBaseUrl) and the admin API
// (/admin/functions/) mounted on it. Once it listens the host knows its own address: the durable
// client's binding data, WEBSITE_HOSTNAME and the function listing name it.
import type { IncomingMessage, ServerResponse } from "node:http";
import { encodeClientPrincipal, type ClientPrincipal } from "../auth";
import { DURABLE_HTTP_PATHS } from "../durable";
import type { Registration } from "../functionsCore";
import type { HostLogger } from "../logger";
import { applySettingsToEnv } from "../settings";
import { startHttpServer, type HttpFunction, type RunningHttpServer } from "../triggers/http";
import { adminFunctionsApi } from "./adminApi";
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
}

export async function serveHttp(
  options: HttpServerOptions,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): Promise<RunningHttpServer> {
  const { runtime, triggers, signedInAs } = options;
  const server = await startHttpServer({
    host: options.host,
    port: options.port,
    routePrefix: options.routePrefix,
    functions: triggers.httpFunctions,
    invoke: runtime.invoke,
    logger,
    ...(signedInAs ? { defaultHeaders: encodeClientPrincipal(signedInAs) } : {}),
    mounts: {
      ...Object.fromEntries(
        DURABLE_HTTP_PATHS.map((path) => [
          path,
          (req: IncomingMessage, res: ServerResponse, rest: string) =>
            runtime.engine.handleRpc(req, res, rest),
        ]),
      ),
      "/admin/functions/": adminFunctionsApi(options.registrations, triggers.timers, runtime.invoke),
    },
  });
  runtime.setBaseUrl(server.url);
  shutdown.push(() => server.stop());
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
