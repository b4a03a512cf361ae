// The durable HTTP API, served from the engine: what durable-functions' DurableClient calls at `rpcBaseUrl`,
// and what the management URLs (statusQueryGetUri and friends) point at. Routes, status codes and shapes
// follow the Durable Functions HTTP API reference and the extension's HttpApiHandler; paths are relative to
// the mount point (webhooks.ts: /runtime/webhooks/durabletask/ and /durabletask/), and controller names,
// operations and the raiseEvent literal match in any case, as ASP.NET routing does. The taskHub, connection
// and code query parameters are accepted and ignored here: the devhost has one task hub, and the system key is
// the host's to check before a request gets here (startup/durableApi.ts). It knows the engine only through the
// operations below, which the engine implements, so that the engine can serve it without the two importing each
// other.
import type http from "node:http";
import { z } from "zod";
import { InvalidEntityContinuationToken, type EntityPage, type EntityQuery } from "./entityQuery";
import { handleInstances, handleStart } from "./rpcInstances";
import { isoDate, booleanText, mediaType, parseJsonBody, parseQuery, readBody, send } from "./rpcIo";
import {
  InvalidContinuationToken,
  type InstancePage,
  type InstanceQuery,
  type InstanceStatus,
  type StatusOptions,
} from "./status";
import { DurableRequestError, type EntityIdLike, type StartOptions } from "./types";
import type { ManagementUrls } from "./webhooks";

/** The durable client operations the HTTP API serves. */
export interface DurableClientOperations {
  startNew(name: string, options?: StartOptions): string;
  getStatus(instanceId: string, opts?: StatusOptions): InstanceStatus | undefined;
  list(query?: InstanceQuery): InstancePage;
  raiseEvent(instanceId: string, eventName: string, data?: unknown): void;
  terminate(instanceId: string, reason?: string): void;
  suspend(instanceId: string, reason?: string): void;
  resume(instanceId: string, reason?: string): void;
  rewind(instanceId: string, reason?: string): void;
  restart(instanceId: string, options?: { newInstanceId?: boolean }): string;
  purge(instanceId: string): { instancesDeleted: number };
  purgeBy(query: Omit<InstanceQuery, "top" | "continuationToken">): { instancesDeleted: number };
  signalEntity(entity: EntityIdLike, operation: string, input?: unknown): void;
  readEntityState(entity: EntityIdLike): { exists: boolean; state: unknown };
  listEntities(query?: EntityQuery): EntityPage;
  waitForCompletion(instanceId: string): Promise<InstanceStatus>;
  /** The management URLs of an instance (statusQueryGetUri and friends), on `baseUrl`. */
  managementPayload(baseUrl: string, instanceId: string): ManagementUrls;
}

/** One request, parsed once for every handler. */
export interface RpcRequest {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  method: string;
  /** Decoded path segments after the mount point. */
  segments: string[];
  query: Record<string, string>;
  /** http://host:port as the caller reached the host: the management URLs the API returns name it. */
  origin: string;
  /** The full URL of the request, which a 202 status names as its Location. */
  url: string;
  pageSize: number;
}

const entityListSchema = z.object({
  lastOperationTimeFrom: isoDate.optional(),
  lastOperationTimeTo: isoDate.optional(),
  top: z.coerce.number().int().min(1).max(10_000).optional(),
  fetchState: booleanText.optional(),
});

export async function handleDurableRpc(
  engine: DurableClientOperations,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathAfterPrefix: string,
  pageSize: number,
  webhookOrigin?: string,
): Promise<void> {
  try {
    // The Host header is the server's to check (triggers/hostHeader.ts) before a request gets here.
    const requestOrigin = `http://${req.headers.host ?? "localhost"}`;
    const origin = webhookOrigin ?? requestOrigin;
    const target = req.url ?? "/";
    // Joined, not resolved: a target of "//other.host/x" must stay a path on this host.
    const url = target.startsWith("/") ? new URL(`${requestOrigin}${target}`) : new URL(target);
    const segments = (pathAfterPrefix.split("?")[0] ?? "")
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    const rpc: RpcRequest = {
      req,
      res,
      method: (req.method ?? "GET").toUpperCase(),
      segments,
      query: Object.fromEntries(url.searchParams.entries()),
      origin,
      url: url.href,
      pageSize,
    };
    const area = segments[0]?.toLowerCase();
    if (area === "orchestrators" && segments.length >= 2 && segments.length <= 3) {
      return rpc.method === "POST" ? await handleStart(engine, rpc) : send(res, 404);
    }
    if (area === "instances") {
      if (await handleInstances(engine, rpc)) return;
    }
    if (area === "entities" && segments.length <= 3) return await handleEntities(engine, rpc);
    return send(res, 404, { error: `No durable API route for ${rpc.method} /${segments.join("/")}` });
  } catch (err) {
    if (err instanceof DurableRequestError) {
      // A body over the limit is left unread: only closing the connection ends it.
      const close: Record<string, string> = err.status === 413 ? { Connection: "close" } : {};
      return send(res, err.status, { error: err.message }, close);
    }
    if (err instanceof InvalidContinuationToken || err instanceof InvalidEntityContinuationToken) {
      return send(res, 400, { error: err.message });
    }
    if (err instanceof URIError) return send(res, 400, { error: `Malformed URL path: ${err.message}` });
    return send(res, 500, { error: err instanceof Error ? err.message : String(err) });
  }
}

/** entities/{name}/{key}: read (GET) or signal (POST with ?op=, DELETE for "delete"); entities[/{name}]: list. */
async function handleEntities(engine: DurableClientOperations, rpc: RpcRequest): Promise<void> {
  const { req, res, method, segments, query } = rpc;
  const [, name, key] = segments;
  if (method === "GET" && key === undefined) {
    const filter = parseQuery(entityListSchema, query);
    const token = req.headers["x-ms-continuation-token"];
    const page = engine.listEntities({
      ...filter,
      ...(name !== undefined ? { name } : {}),
      top: filter.top ?? rpc.pageSize,
      ...(typeof token === "string" && token ? { continuationToken: token } : {}),
    });
    return send(
      res,
      200,
      page.entities,
      page.continuationToken ? { "x-ms-continuation-token": page.continuationToken } : {},
    );
  }
  if (name === undefined || key === undefined) return send(res, 404);
  if (method === "GET") {
    const entity = engine.readEntityState({ name, key });
    return entity.exists
      ? send(res, 200, entity.state)
      : send(res, 404, { error: `Entity @${name.toLowerCase()}@${key} does not exist` });
  }
  if (method !== "POST" && method !== "DELETE") return send(res, 404);
  const operation = method === "DELETE" ? "delete" : query.op;
  if (!operation) {
    throw new DurableRequestError(400, "the 'op' query parameter (the operation name) is required");
  }
  const body = await readBody(req);
  // The extension passes JSON content as JSON and anything else as the text it is.
  const input =
    body === ""
      ? undefined
      : mediaType(req) === "application/json"
        ? parseJsonBody(body, `the input of operation '${operation}'`)
        : body;
  engine.signalEntity({ name, key }, operation, input);
  return send(res, 202);
}
