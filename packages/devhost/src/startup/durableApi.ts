// The durable HTTP API where the extension serves it. On the app's port, /runtime/webhooks/durabletask/ answers
// only a request that presents the system key (systemKeys.ts), else 401, as the host's extension webhooks do. The
// durable client of the app calls the extension's local RPC endpoint instead (the binding's rpcBaseUrl), which
// durable-functions 3.x reaches without a key (it resolves its paths against rpcBaseUrl, so no query could carry
// one): as in the extension, that endpoint is a listener of its own on a loopback port, /durabletask/, never the
// app's port. It answers only requests addressed to loopback by name, so that a web page cannot reach it through
// a DNS name it rebinds to 127.0.0.1.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { DurableEngine } from "../durable";
import { RPC_PATH } from "../durable/webhooks";
import type { HostLogger } from "../logger";
import type { MountHandler } from "../triggers/http";
import { requestOrigin } from "../triggers/hostHeader";
import { DURABLE_KEY_NAME, keyMatches, presentedKey } from "./systemKeys";

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The webhooks' handler: the key checked, then the engine's API. */
export function durableWebhooks(engine: DurableEngine, systemKey: string): MountHandler {
  return (req, res, rest) => {
    const query = new URLSearchParams(rest.includes("?") ? rest.slice(rest.indexOf("?")) : "");
    if (!keyMatches(presentedKey(req, query), systemKey)) {
      const text =
        `Unauthorized: the durable HTTP API needs the ${DURABLE_KEY_NAME} system key ` +
        "(as ?code= or x-functions-key); the devhost prints it at start-up.";
      res
        .writeHead(401, {
          "content-type": "text/plain; charset=utf-8",
          "content-length": Buffer.byteLength(text),
        })
        .end(text);
      return;
    }
    return engine.handleRpc(req, res, rest);
  };
}

export interface DurableRpcEndpoint {
  /** http://127.0.0.1:<port>, the origin of the binding's rpcBaseUrl. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The extension's local RPC endpoint on 127.0.0.1:0. Management URLs in its answers point at `webhookOrigin`, as
 * the extension's always name the public webhooks.
 */
export async function startDurableRpcEndpoint(
  engine: DurableEngine,
  webhookOrigin: () => string,
  logger: HostLogger,
): Promise<DurableRpcEndpoint> {
  let ownHost = "127.0.0.1";
  const server = http.createServer({ requireHostHeader: false }, (req, res) => {
    const target = requestOrigin(req, ownHost);
    const hostname = "problem" in target ? undefined : new URL(target.origin).hostname;
    if ("problem" in target || !LOOPBACK_NAMES.has(hostname ?? "")) {
      const text = "problem" in target ? target.problem : "The durable RPC endpoint answers loopback only.";
      res.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(text);
      return;
    }
    const { pathAndQuery } = target;
    if (!pathAndQuery.toLowerCase().startsWith(RPC_PATH)) {
      res.writeHead(404).end();
      return;
    }
    engine
      .handleRpc(req, res, pathAndQuery.slice(RPC_PATH.length), webhookOrigin())
      .catch((error: unknown) => {
        logger.error(
          `Durable RPC ${req.method} ${req.url} failed: ${(error as Error).stack ?? String(error)}`,
        );
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  ownHost = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `http://${ownHost}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}

/** The start-up line that names the durable HTTP API with its key, as func start names its functions' URLs. */
export function durableApiMessage(appUrl: string, systemKey: string): string {
  return `Durable HTTP API (system key ${DURABLE_KEY_NAME}): ${appUrl}/runtime/webhooks/durabletask/instances?code=${encodeURIComponent(systemKey)}`;
}
