/**
 * What the HTTP fault proxy needs to know of the Cosmos DB REST API: which operation a request is (so a rule can
 * hit creates and spare reads), and the error answers the service gives, shaped as @azure/cosmos 4.9 reads them.
 *
 * The SDK (request/RequestHandler.js) parses every error body as JSON and reads its `message`: an error status
 * with an empty or non-JSON body is not a Cosmos error to it but a TypeError or SyntaxError, which none of its
 * retry policies recognise. From the headers it takes `x-ms-substatus` (err.substatus), `x-ms-activity-id`
 * (err.activityId) and `x-ms-retry-after-ms` (err.retryAfterInMs, the wait of its throttle retries).
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** What a rule's predicate sees of a request: its head only, the body is streamed through untouched. */
export interface RequestHead {
  method: string;
  /** Path and query, as the client sent them (`/dbs/sas/colls/state/docs/o-1`). */
  path: string;
  headers: IncomingHttpHeaders;
}

export type CosmosOperation =
  "create" | "upsert" | "query" | "read" | "readFeed" | "replace" | "patch" | "delete" | "batch" | "other";

const header = (head: RequestHead, name: string): string => String(head.headers[name] ?? "").toLowerCase();

/**
 * The document operation of a request, from the REST API's conventions: POST .../docs creates, upserts (header
 * x-ms-documentdb-is-upsert), queries (x-ms-documentdb-isquery, or a query+json body) or runs a batch
 * (x-ms-cosmos-is-batch-request); PUT .../docs/{id} replaces, PATCH patches, GET reads one document or the
 * feed, DELETE deletes. Anything that is not under /docs (databases, containers, partition key ranges) is
 * "other".
 */
export function cosmosOperation(head: RequestHead): CosmosOperation {
  const path = head.path.split("?")[0] ?? "";
  const match = /\/docs(\/[^/]+)?\/?$/.exec(path);
  if (!match) return "other";
  const oneDocument = match[1] !== undefined;
  switch (head.method.toUpperCase()) {
    case "POST":
      if (oneDocument) return "other";
      if (header(head, "x-ms-documentdb-isquery") === "true") return "query";
      if (header(head, "content-type").startsWith("application/query+json")) return "query";
      if (header(head, "x-ms-cosmos-is-batch-request") === "true") return "batch";
      if (header(head, "x-ms-documentdb-is-upsert") === "true") return "upsert";
      return "create";
    case "GET":
      return oneDocument ? "read" : "readFeed";
    case "PUT":
      return oneDocument ? "replace" : "other";
    case "PATCH":
      return oneDocument ? "patch" : "other";
    case "DELETE":
      return oneDocument ? "delete" : "other";
    default:
      return "other";
  }
}

/** A predicate for a rule: the request is one of these document operations. */
export const isOperation =
  (...operations: CosmosOperation[]) =>
  (head: RequestHead): boolean =>
    operations.includes(cosmosOperation(head));

/** An error answer of the service. */
export interface CosmosErrorSpec {
  status: number;
  /** x-ms-substatus; omitted when undefined. */
  substatus?: number;
  /** x-ms-retry-after-ms: how long the service asks the client to wait (429, and 449). */
  retryAfterMs?: number;
  /** The body's `code`; default the status's name as the service spells it. */
  code?: string;
  /** The first line of the body's `message`; default the service's wording for the status. */
  message?: string;
}

/** The service's name and wording for the statuses the fault tests inject. */
const KNOWN: Record<number, { code: string; message: string }> = {
  408: { code: "RequestTimeout", message: "Request timed out." },
  429: {
    code: "TooManyRequests",
    message:
      "Request rate is large. More Request Units may be needed, so no changes were made. " +
      "Please retry this request later. Learn more: http://aka.ms/cosmosdb-error-429",
  },
  449: {
    code: "RetryWith",
    message: "Conflicting request to resource has been attempted. Retry to avoid conflicts.",
  },
  503: {
    code: "ServiceUnavailable",
    message: "Service is currently unavailable. More info: https://aka.ms/cosmosdb-tsg-service-unavailable",
  },
};

/** Throttled: the partition's RU budget is spent (substatus 3200, RUBudgetExceeded). */
export const throttled = (retryAfterMs = 50): CosmosErrorSpec => ({
  status: 429,
  substatus: 3200,
  retryAfterMs,
});
/** Service unavailable, as the service generates it (substatus 21008, ServerGenerated503). */
export const serviceUnavailable = (): CosmosErrorSpec => ({ status: 503, substatus: 21008 });
/** Request timeout (the gateway's; no substatus). */
export const requestTimeout = (): CosmosErrorSpec => ({ status: 408, substatus: 0 });
/** Retry with: a concurrent write to the same resource was in progress. */
export const retryWith = (retryAfterMs = 50): CosmosErrorSpec => ({
  status: 449,
  substatus: 0,
  retryAfterMs,
});

/** Status, headers and body of the service's answer `spec` to the request at `path`. */
export function cosmosErrorResponse(
  spec: CosmosErrorSpec,
  path: string,
): { status: number; headers: Record<string, string>; body: string } {
  const known = KNOWN[spec.status];
  const activityId = randomUUID();
  const code = spec.code ?? known?.code ?? String(spec.status);
  const text = spec.message ?? known?.message ?? `Injected status ${spec.status}.`;
  // The gateway's message: the errors as JSON, then the activity and the request URI.
  const message = `Message: ${JSON.stringify({ Errors: [text] })}\r\nActivityId: ${activityId}, Request URI: ${path}`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-ms-activity-id": activityId,
    "x-ms-request-charge": "0",
    "x-ms-gatewayversion": "version=2.14.0",
  };
  if (spec.substatus !== undefined) headers["x-ms-substatus"] = String(spec.substatus);
  if (spec.retryAfterMs !== undefined) headers["x-ms-retry-after-ms"] = String(spec.retryAfterMs);
  return { status: spec.status, headers, body: JSON.stringify({ code, message }) };
}
