/**
 * The gateway's translator: which correction applies to which request, so that the stand-in server answers
 * the .NET, Python and Node SDKs as Cosmos DB does. Everything else passes through unchanged.
 */
import { SyntaxError as QuerySyntaxError } from "@zeit/cosmosdb-query";
import type { Backend, GatewayReply, GatewayRequest, Translator } from "./gateway";
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
import { containerPath, resourceOf, type Resource } from "./resourcePath";

interface QueryBody {
  query?: string;
  parameters?: QueryParameter[];
}

/** @param ownEndpoint advertised when a request has no Host header, e.g. `http://127.0.0.1:8081/` */
export function cosmosProtocol(ownEndpoint: () => string): Translator {
  return async (request, backend) => {
    try {
      const reply = await translate(request, backend, ownEndpoint);
      return withHttpContentLocation(reply);
    } catch (error) {
      if (error instanceof PartitionScopeError || error instanceof QuerySyntaxError) {
        return badRequest(error.message);
      }
      throw error;
    }
  };
}

async function translate(
  request: GatewayRequest,
  backend: Backend,
  ownEndpoint: () => string,
): Promise<GatewayReply> {
  const resource = resourceOf(request.url);
  const { method, headers } = request;

  if (resource.kind === "account" && method === "GET") {
    const host = headerValue(headers, "host");
    return withAdvertisedEndpoint(await backend(request), host ? `http://${host}/` : ownEndpoint());
  }
  if (
    (resource.kind === "containers" && method === "POST") ||
    (resource.kind === "container" && method === "PUT")
  ) {
    return backend(withHashPartitioning(request));
  }
  if (resource.kind === "document" && method === "GET") return backend(asPlainPointRead(request));
  if (resource.kind !== "documents") return backend(request);

  if (method === "POST" && isTrue(headers, HEADER.isQueryPlanRequest)) {
    const { query } = (jsonBody(request.body) ?? {}) as QueryBody;
    return jsonReply(200, queryPlanFor(query ?? ""));
  }
  const partitionKey = parsePartitionKeyHeader(headerValue(headers, HEADER.partitionKey));
  if (!partitionKey) return backend(request);
  const isQuery = method === "POST" && (isTrue(headers, HEADER.isQuery) || isQueryContent(request));
  // A read feed scoped to a partition key is the query of every item in it; a change feed (A-IM) is not.
  const isReadFeed = method === "GET" && headers[HEADER.incrementalFeed] === undefined;
  if (!isQuery && !isReadFeed) return backend(request);
  return backend(await scopedToPartition(request, resource, partitionKey, isReadFeed, backend));
}

const isQueryContent = (request: GatewayRequest): boolean =>
  headerValue(request.headers, "content-type")?.split(";")[0]?.trim() === QUERY_CONTENT_TYPE;

/**
 * The query (or read feed) rewritten to filter on the container's partition key paths, sent as a query: the
 * server ignores the partition key header and would return every partition. The container's definition is
 * read from the server each time, so a container deleted and created again is never seen with its old key.
 */
async function scopedToPartition(
  request: GatewayRequest,
  resource: Extract<Resource, { kind: "documents" }>,
  partitionKey: NonNullable<ReturnType<typeof parsePartitionKeyHeader>>,
  isReadFeed: boolean,
  backend: Backend,
): Promise<GatewayRequest> {
  const container = await backend({
    method: "GET",
    url: containerPath(resource.db, resource.coll),
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
