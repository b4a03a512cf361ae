/**
 * The gateway's translator: which correction applies to which request, so that the stand-in server answers
 * the .NET, Python and Node SDKs as Cosmos DB does. Most requests (item writes, reads, unscoped queries) go to
 * the server as they are, or with a header added; the few that need their body or the answer changed are
 * translated.
 */
import { SyntaxError as QuerySyntaxError } from "@zeit/cosmosdb-query";
import type { IncomingHttpHeaders } from "node:http";
import type { Backend, GatewayReply, GatewayRequest, RequestHead, Translator } from "./gateway";
import {
  parsePartitionKeyHeader,
  PartitionScopeError,
  scopeQueryToPartition,
  type QueryParameter,
} from "./partitionScope";
import {
  asPlainPointRead,
  badRequest,
  headerValue,
  HEADER,
  isTrue,
  jsonBody,
  jsonReply,
  QUERY_CONTENT_TYPE,
  withAdvertisedEndpoint,
  withHashPartitioning,
  withHttpContentLocation,
} from "./protocolFixes";
import { queryPlanFor } from "./queryPlan";
import { containerPath, resourceOf } from "./resourcePath";

interface QueryBody {
  query?: string;
  parameters?: QueryParameter[];
}

type Treatment =
  | { kind: "direct"; headers: IncomingHttpHeaders }
  | { kind: "account" }
  | { kind: "containerDefinition" }
  | { kind: "queryPlan" }
  | { kind: "partitionScoped"; db: string; coll: string; isReadFeed: boolean };

/** What the request needs, from its method, path and headers alone (its body is not read yet). */
function treatmentOf({ method, url, headers }: RequestHead): Treatment {
  const resource = resourceOf(url);
  if (resource.kind === "account" && method === "GET") return { kind: "account" };
  if (
    (resource.kind === "containers" && method === "POST") ||
    (resource.kind === "container" && method === "PUT")
  ) {
    return { kind: "containerDefinition" };
  }
  if (resource.kind === "document" && method === "GET")
    return { kind: "direct", headers: asPlainPointRead(headers) };
  if (resource.kind !== "documents") return { kind: "direct", headers };

  if (method === "POST" && isTrue(headers, HEADER.isQueryPlanRequest)) return { kind: "queryPlan" };
  if (headerValue(headers, HEADER.partitionKey) === undefined) return { kind: "direct", headers };
  const isQuery = method === "POST" && (isTrue(headers, HEADER.isQuery) || isQueryContent(headers));
  // A read feed scoped to a partition key is the query of every item in it; a change feed (A-IM) is not.
  const isReadFeed = method === "GET" && headers[HEADER.incrementalFeed] === undefined;
  if (!isQuery && !isReadFeed) return { kind: "direct", headers };
  return { kind: "partitionScoped", db: resource.db, coll: resource.coll, isReadFeed };
}

const isQueryContent = (headers: IncomingHttpHeaders): boolean =>
  headerValue(headers, "content-type")?.split(";")[0]?.trim() === QUERY_CONTENT_TYPE;

/** @param ownEndpoint advertised when a request has no Host header, e.g. `http://127.0.0.1:8081/` */
export function cosmosProtocol(ownEndpoint: () => string): Translator {
  return {
    direct(head) {
      const treatment = treatmentOf(head);
      return treatment.kind === "direct" ? treatment.headers : undefined;
    },
    responseHeader: withHttpContentLocation,
    async translate(request, backend) {
      try {
        return await translate(request, backend, ownEndpoint);
      } catch (error) {
        if (error instanceof PartitionScopeError || error instanceof QuerySyntaxError) {
          return badRequest(error.message);
        }
        throw error;
      }
    },
  };
}

async function translate(
  request: GatewayRequest,
  backend: Backend,
  ownEndpoint: () => string,
): Promise<GatewayReply> {
  const treatment = treatmentOf(request);
  switch (treatment.kind) {
    case "direct":
      return backend({ ...request, headers: treatment.headers });
    case "account": {
      const host = headerValue(request.headers, "host");
      return withAdvertisedEndpoint(await backend(request), host ? `http://${host}/` : ownEndpoint());
    }
    case "containerDefinition":
      return backend(withHashPartitioning(request));
    case "queryPlan": {
      const { query } = (jsonBody(request.body) ?? {}) as QueryBody;
      return jsonReply(200, queryPlanFor(query ?? ""));
    }
    case "partitionScoped":
      return backend(await scopedToPartition(request, treatment, backend));
  }
}

/**
 * The query (or read feed) rewritten to filter on the container's partition key paths, sent as a query: the
 * server ignores the partition key header and would return every partition. The container's definition is
 * read from the server each time, so a container deleted and created again is never seen with its old key.
 */
async function scopedToPartition(
  request: GatewayRequest,
  { db, coll, isReadFeed }: { db: string; coll: string; isReadFeed: boolean },
  backend: Backend,
): Promise<GatewayRequest> {
  const partitionKey = parsePartitionKeyHeader(headerValue(request.headers, HEADER.partitionKey));
  if (!partitionKey) return request;
  const container = await backend({
    method: "GET",
    url: containerPath(db, coll),
    headers: { host: request.headers.host },
    body: Buffer.alloc(0),
  });
  if (container.status !== 200) return request;
  const paths =
    (jsonBody(container.body) as { partitionKey?: { paths?: string[] } }).partitionKey?.paths ?? [];
  if (paths.length === 0) return request;

  const spec = isReadFeed ? { query: "SELECT * FROM c" } : ((jsonBody(request.body) ?? {}) as QueryBody);
  if (spec.query === undefined) return request;
  const scoped = scopeQueryToPartition(
    { query: spec.query, parameters: spec.parameters ?? [] },
    paths,
    partitionKey,
  );
  return {
    method: "POST",
    url: request.url,
    // The filter now pins the partition, so the server's own "cross-partition query without the header" check
    // has nothing to refuse.
    headers: {
      ...request.headers,
      "content-type": QUERY_CONTENT_TYPE,
      [HEADER.isQuery]: "True",
      [HEADER.enableCrossPartition]: "true",
    },
    body: Buffer.from(JSON.stringify(scoped)),
  };
}
