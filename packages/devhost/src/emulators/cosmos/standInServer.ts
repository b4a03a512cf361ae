/**
 * The stand-in server: @vercel/cosmosdb-server's account, routes and handlers, in a request listener of this
 * package's own instead of the package's `createHttpServer`, so that the emulator holds the account the
 * handlers work on. Every request goes to the package's handler for its route, as in `createHttpServer`, except
 * the two that run the query engine over a container: a document query and a read feed of documents. Those run
 * through queryEngine.ts, which gives the same answer without the engine's O(n²) cost in the container's size.
 *
 * `respond` is the package's own request handler (lib/index.js, `generateRequestHandler`), with keep-alive on.
 */
import { randomUUID } from "node:crypto";
import http, { type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Account from "@vercel/cosmosdb-server/lib/account";
import type Collection from "@vercel/cosmosdb-server/lib/account/collection";
import readItems from "@vercel/cosmosdb-server/lib/handler/_read-items";
import queryDocumentsHandler from "@vercel/cosmosdb-server/lib/handler/query-documents";
import readDocumentsHandler from "@vercel/cosmosdb-server/lib/handler/read-documents";
import readJson from "@vercel/cosmosdb-server/lib/json";
import routes from "@vercel/cosmosdb-server/lib/routes";
import isTrueHeader from "@vercel/cosmosdb-server/lib/true-header";
import { compiledQuery, runQuery, type QueryParameters, type QueryResult } from "./queryEngine";

type Params = Record<string, string>;
type Handler = (account: Account, req: IncomingMessage, res: ServerResponse, params: Params) => unknown;
interface Page {
  maxItemCount?: number | null;
  continuation?: { token: string } | null;
}

/** The container's documents, in the order the server keeps them (its own query reads them in this order). */
function* documentsOf(collection: Collection): Generator<unknown> {
  for (const item of collection.documents._data.values()) yield item.read();
}

/**
 * `Items.query` of the server (lib/account/items.js) over the query engine of queryEngine.ts: null when the
 * container does not exist; an error of the engine at run time is a bad request.
 */
function queryContainer(
  collection: Collection,
  spec: { query: string; parameters?: QueryParameters["parameters"] },
  page: Page,
  withContainerOptions: boolean,
): QueryResult | null {
  const container = collection.read();
  if (!container) return null;
  // A query that does not parse throws the engine's SyntaxError here, as the server's own parse does.
  const compiled = compiledQuery(spec.query);
  try {
    return runQuery(compiled, documentsOf(collection), {
      maxItemCount: page.maxItemCount,
      continuation: page.continuation,
      ...(withContainerOptions
        ? {
            parameters: spec.parameters,
            udf: collection.userDefinedFunctions.functions,
            compositeIndexes: (container.indexingPolicy?.compositeIndexes ||
              []) as QueryParameters["compositeIndexes"],
          }
        : {}),
    });
  } catch (err) {
    (err as { badRequest?: boolean }).badRequest = true;
    throw err;
  }
}

/** The server's handler of a document query (lib/handler/query-documents.js), over queryContainer. */
const queryDocuments: Handler = (account, req, res, { dbId = "", collId = "" }) =>
  readItems(req, res, "Documents", async (page) => {
    const body = (await readJson(req)) as { query?: string; parameters?: QueryParameters["parameters"] };
    if (!body.query) {
      res.statusCode = 400;
      return { message: "missing query" };
    }
    const collection = account.database(dbId).collection(collId);
    if (!isTrueHeader(req, "x-ms-documentdb-query-enablecrosspartition")) {
      const paths = collection.read()?.partitionKey?.paths ?? [];
      if (paths.length && !compiledQuery(body.query).query.containsPartitionKeys(paths)) {
        res.statusCode = 400;
        return { message: "missing partition keys" };
      }
    }
    try {
      return queryContainer(collection, { query: body.query, parameters: body.parameters }, page, true);
    } catch (err) {
      if ((err as { badRequest?: boolean }).badRequest) {
        res.statusCode = 400;
        return { message: (err as Error).message };
      }
      throw err;
    }
  });

/** The server's read feed of documents (lib/handler/read-documents.js): `SELECT * FROM c`, paged. */
const readDocuments: Handler = (account, req, res, { dbId = "", collId = "" }) =>
  readItems(req, res, "Documents", (page) =>
    queryContainer(account.database(dbId).collection(collId), { query: "SELECT * FROM c" }, page, false),
  );

const REPLACED = new Map<unknown, Handler>([
  [queryDocumentsHandler, queryDocuments],
  [readDocumentsHandler, readDocuments],
]);

/** The package's request handler (lib/index.js), with keep-alive, and the two handlers above for its own. */
function respond(account: Account, req: IncomingMessage, res: ServerResponse): void {
  const route = routes(req) as [Params, Handler] | undefined;
  (async () => {
    let body: { message?: unknown; _etag?: unknown } | undefined;
    if (route) {
      const [params, packageHandler] = route;
      const handler = REPLACED.get(packageHandler) ?? packageHandler;
      try {
        body = (await handler(account, req, res, params)) as typeof body;
      } catch (err) {
        console.error(err);
        body = { message: (err as Error).message };
        res.statusCode = 500;
      }
      // As in the package, an error status without a body throws here, and the answer is a bare 500.
      const answer = body as { message?: unknown };
      if (res.statusCode > 399 && !answer.message) answer.message = "";
    } else {
      res.statusCode = 400;
      body = { message: "no route" };
    }
    if (body && body._etag) res.setHeader("etag", String(body._etag));
    res.setHeader("content-type", "application/json");
    res.setHeader("content-location", `https://${req.headers.host}${req.url}`);
    res.setHeader("connection", "keep-alive");
    res.setHeader("x-ms-activity-id", randomUUID());
    res.setHeader("x-ms-request-charge", "1");
    if (req.headers["x-ms-documentdb-populatequerymetrics"]) {
      res.setHeader(
        "x-ms-documentdb-query-metrics",
        "totalExecutionTimeInMs=0.00;queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;" +
          "queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs=0.00;" +
          "indexLookupTimeInMs=0.00;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;" +
          "userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount=0;retrievedDocumentSize=0;" +
          "outputDocumentCount=1;outputDocumentSize=0;writeOutputTimeInMs=0.00;indexUtilizationRatio=0.00",
      );
    }
    if (req.headers["a-im"] && res.statusCode === 200) {
      if (req.headers["if-none-match"]) res.statusCode = 304;
      res.setHeader("etag", "1");
    }
    res.end(JSON.stringify(body));
  })().catch((err: unknown) => {
    console.error(err);
    if (!res.writableEnded) {
      res.statusCode = 500;
      res.end("");
    }
  });
}

/**
 * An http server (not listening yet) that serves the Cosmos DB REST API from memory, as the package's
 * `createHttpServer({ keepAlive: true })` does. Its account is created when it starts listening, named after its
 * address, as the package's is.
 */
export function createStandInServer(): Server {
  let account: Account | undefined;
  const server = http.createServer({ keepAlive: true }, (req, res) => respond(account as Account, req, res));
  server.on("listening", () => {
    const { address, port } = server.address() as AddressInfo;
    account = new Account(address === "0.0.0.0" || address === "::" ? "localhost" : address, port);
  });
  return server;
}
