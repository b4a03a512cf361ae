/**
 * Small corrections of the stand-in server's answers and of what it expects, each one making it answer as
 * Cosmos DB does for a client other than @azure/cosmos (the .NET and Python SDKs). Each function is pure: it
 * takes a request, its headers or a reply and gives the corrected one.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { GatewayReply, GatewayRequest, HeaderValue } from "./gateway";

export const HEADER = {
  partitionKey: "x-ms-documentdb-partitionkey",
  enableCrossPartition: "x-ms-documentdb-query-enablecrosspartition",
  isQuery: "x-ms-documentdb-isquery",
  isQueryPlanRequest: "x-ms-cosmos-is-query-plan-request",
  incrementalFeed: "a-im",
  contentLocation: "content-location",
} as const;

export const QUERY_CONTENT_TYPE = "application/query+json";

/** A Cosmos DB boolean header: "True"/"true", possibly repeated. */
export function isTrue(headers: IncomingHttpHeaders, name: string): boolean {
  const value = headers[name];
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) => v?.toLowerCase() === "true");
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function jsonBody(body: Buffer): unknown {
  return body.length === 0 ? undefined : JSON.parse(body.toString("utf8"));
}

export function jsonReply(status: number, value: unknown): GatewayReply {
  return {
    status,
    headers: { "content-type": "application/json", "x-ms-request-charge": "1" },
    body: Buffer.from(JSON.stringify(value)),
  };
}

export const badRequest = (message: string): GatewayReply => jsonReply(400, { code: "BadRequest", message });

/**
 * A container created (or replaced) without a partition key kind gets `kind: "Hash"`, as Cosmos DB reports it.
 * The server stores the definition as sent, and the .NET and Python SDKs read the kind back to hash
 * partition keys; @azure/cosmos 4.9.3 sends none.
 */
export function withHashPartitioning(request: GatewayRequest): GatewayRequest {
  const container = jsonBody(request.body) as { partitionKey?: { kind?: string } } | undefined;
  if (!container?.partitionKey || container.partitionKey.kind !== undefined) return request;
  const body = { ...container, partitionKey: { ...container.partitionKey, kind: "Hash" } };
  return { ...request, body: Buffer.from(JSON.stringify(body)) };
}

/**
 * A point read goes to the server as a cross-partition request. Cosmos DB ignores that header on a point read,
 * but the server does not: without it, it compares the found item's partition key before checking that an item
 * was found, and a missing item is a 500 instead of a 404. @azure/cosmos sends the header on every request, so
 * its reads always took the path that works; the .NET and Python SDKs send it only on queries.
 */
export function asPlainPointRead(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return { ...headers, [HEADER.enableCrossPartition]: "true" };
}

/**
 * The account's regions name the endpoint the client used, over http. The server advertises
 * `https://<its own address>/`, which is neither the scheme it serves nor, behind the gateway, its address; a
 * client that follows the advertised endpoint (every SDK's default) would fail.
 */
export function withAdvertisedEndpoint(reply: GatewayReply, endpoint: string): GatewayReply {
  if (reply.status !== 200) return reply;
  const account = jsonBody(reply.body) as Record<string, unknown>;
  for (const field of ["writableLocations", "readableLocations"]) {
    const locations = account[field];
    if (!Array.isArray(locations)) continue;
    account[field] = locations.map((location: Record<string, unknown>) => ({
      ...location,
      databaseAccountEndpoint: endpoint,
    }));
  }
  return { ...reply, body: Buffer.from(JSON.stringify(account)) };
}

/**
 * The server names every response `https://…` in Content-Location; it is served over http. Applied to each
 * response header as the server sets it (direct requests) or as the gateway writes it (translated ones).
 */
export function withHttpContentLocation<V extends HeaderValue>(name: string, value: V): V | string {
  if (name.toLowerCase() !== HEADER.contentLocation) return value;
  if (typeof value !== "string" || !value.startsWith("https://")) return value;
  return `http://${value.slice("https://".length)}`;
}
