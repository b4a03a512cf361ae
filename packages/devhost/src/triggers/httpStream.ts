// HTTP streaming (app.setup({ enableHttpStream: true })), the host's side of it. With streaming on, @azure/functions
// starts an HTTP server of its own in the worker and reports its address as the capability HttpUri
// (ProgrammingModel.ts and http/httpProxy.ts in the library's source). The host then no longer puts the request
// into the RPC invocation: it forwards the request, body and all, to that server with the invocation's id in
// `x-ms-invocation-id` (azure-functions-host, DefaultHttpProxyService.cs: YARP's forwarder with its default
// transforms, which add the X-Forwarded-* headers and copy the response's headers but the hop-by-hop ones). The
// library pairs the two (waitForProxyRequest), gives the handler a Request whose body is the forwarded stream
// (HttpRequest.ts createStreamRequest: the URL from x-forwarded-proto and x-forwarded-host, the headers and route
// parameters from the invocation's trigger metadata), and writes the handler's response on the forwarded request's
// response (sendProxyResponse) instead of into the RPC response. The host relays that response to the client as it
// comes, so neither body is ever held whole.
import http from "node:http";
import type net from "node:net";
import type { RpcTypedData } from "../functionsCore";
import type { InvocationResult } from "../invocation";
import type { HostLogger } from "../logger";
import { sendTooLarge } from "./bodyLimit";

const INVOCATION_ID_HEADER = "x-ms-invocation-id";

/** Hop-by-hop headers (RFC 9110 7.6.1): they describe one connection, so a proxy never forwards them. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** The worker's HTTP server, and the connections to it. */
export class WorkerHttpProxy {
  readonly #port: number;
  readonly #agent = new http.Agent({ keepAlive: true });

  constructor(uri: URL) {
    // The library names itself `http://localhost:<port>/` and listens on every interface; the devhost connects
    // on loopback by address, so that no name lookup stands between it and the worker.
    this.#port = Number(uri.port);
  }

  /** Starts forwarding `req` under `invocationId`; the request body streams as the worker reads it. */
  forward(req: http.IncomingMessage, target: ForwardTarget): http.ClientRequest {
    const forwarded = http.request({
      host: "127.0.0.1",
      port: this.#port,
      agent: this.#agent,
      method: req.method,
      path: target.pathAndQuery,
      headers: {
        ...withoutHopByHop(req.headers),
        host: `127.0.0.1:${this.#port}`,
        [INVOCATION_ID_HEADER]: target.invocationId,
        "x-forwarded-for": forwardedFor(req),
        "x-forwarded-host": target.host,
        "x-forwarded-proto": "http",
      },
    });
    // The headers go as soon as there is a connection, without waiting for the first bytes of the body: the
    // invocation waits for them.
    forwarded.flushHeaders();
    return forwarded;
  }

  /** Closes the connections to the worker (the worker's server itself is the library's, and lives on). */
  close(): void {
    this.#agent.destroy();
  }
}

export interface ForwardTarget {
  invocationId: string;
  /** The Host the client addressed (checked), which the library builds request.url from. */
  host: string;
  /** The request target's path and query, as the client sent them. */
  pathAndQuery: string;
}

export interface StreamedExchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  proxy: WorkerHttpProxy;
  target: ForwardTarget;
  maxBodyBytes: number;
  logger: HostLogger;
  /** Starts the invocation under `target.invocationId`; the library waits in it for the forwarded request. */
  invoke: () => Promise<InvocationResult>;
}

/**
 * The trigger metadata of a streamed request, which is where the library reads the request's headers and route
 * parameters from (createStreamRequest; see azure-functions-host issue #9840): "Headers" and "Query" as JSON, each
 * route parameter as a string under its name. The library ignores "Query" and parses the URL instead.
 */
export function streamedTriggerMetadata(
  headers: Record<string, string>,
  query: Record<string, string>,
  params: Record<string, string>,
): Record<string, RpcTypedData> {
  const metadata: Record<string, RpcTypedData> = {};
  for (const [name, value] of Object.entries(params)) metadata[name] = { string: value };
  metadata.Headers = { json: JSON.stringify(headers) };
  metadata.Query = { json: JSON.stringify(query) };
  return metadata;
}

/** The client's address appended to what the request says already, as YARP's X-Forwarded-For transform does. */
function forwardedFor(req: http.IncomingMessage): string {
  const client = req.socket.remoteAddress ?? "unknown";
  const earlier = req.headers["x-forwarded-for"];
  return earlier ? `${String(earlier)}, ${client}` : client;
}

function withoutHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const connectionNamed = new Set(
    String(headers.connection ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase()),
  );
  const kept: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || connectionNamed.has(name)) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * One HTTP request to a function of a streaming app: forwarded to the worker while the invocation runs, with the
 * worker's response relayed back. Resolves when the invocation has ended.
 */
export async function exchangeThroughWorker(exchange: StreamedExchange): Promise<void> {
  const { req, res, logger } = exchange;
  const forwarded = exchange.proxy.forward(req, exchange.target);
  // Set once the client has its answer's status line, from the worker or from the devhost.
  let answered = false;
  let relayed = false;
  let gaveUp = false;
  const giveUp = (): void => {
    gaveUp = true;
    abandon(forwarded);
  };

  forwarded.on("response", (workerRes) => {
    if (answered) {
      workerRes.destroy();
      return;
    }
    answered = relayed = true;
    res.writeHead(workerRes.statusCode ?? 200, withoutHopByHop(workerRes.headers));
    // Headers go out at once: a client of a long stream (an AI answer token by token) sees the status first.
    res.flushHeaders();
    workerRes.pipe(res);
  });
  forwarded.on("error", (error) => {
    if (!gaveUp) logger.warn(`HTTP streaming: forwarding to the worker failed: ${error.message}`);
  });
  // A client that goes away cancels the forwarded request, so the handler's body stream ends with an error.
  res.on("close", () => {
    if (!res.writableFinished) giveUp();
  });

  relayRequestBody(req, forwarded, exchange.maxBodyBytes, () => {
    giveUp();
    if (answered) return;
    answered = true;
    sendTooLarge(res, exchange.maxBodyBytes);
  });

  const result = await exchange.invoke();
  if (!result.succeeded) {
    // The library sends nothing when the handler throws (issue #324 in azure-functions-nodejs-library: in Azure the
    // client then waits); the devhost answers 500 as it does without streaming, or cuts a body already on its way.
    giveUp();
    if (!answered) {
      answered = true;
      res.writeHead(500).end();
    } else if (relayed && !res.writableFinished) res.destroy();
    return;
  }
  if (!result.httpResponseGiven) {
    // toRpcHttp sends no response over the worker's server for a handler that returned nothing: 204, as without
    // streaming.
    giveUp();
    if (!answered) {
      answered = true;
      res.writeHead(204).end();
    }
  }
}

/**
 * Cuts a forwarded request short, but only once its headers are on their way to the worker: the library holds the
 * invocation until its request arrives (waitForProxyRequest), so a request cut before it was sent (a client that
 * left at once) would hold the invocation forever. Cut after, the handler sees its body end with an error.
 */
function abandon(forwarded: http.ClientRequest): void {
  const cutOnceSent = (socket: net.Socket): void => {
    // Headers queued on a connecting socket are written when it connects; the next turn of the loop is after that.
    if (socket.connecting) socket.once("connect", () => setImmediate(() => forwarded.destroy()));
    else setImmediate(() => forwarded.destroy());
  };
  if (forwarded.socket) cutOnceSent(forwarded.socket);
  else forwarded.once("socket", cutOnceSent);
}

/**
 * Streams the client's body to the worker as the worker reads it (backpressure both ways), under the host's body
 * size limit: past it, forwarding stops and `onTooLarge` gives up the request and answers 413, as Kestrel refuses a
 * body that outgrows FUNCTIONS_REQUEST_BODY_SIZE_LIMIT (bodyLimit.ts) whether or not the app streams.
 */
function relayRequestBody(
  req: http.IncomingMessage,
  forwarded: http.ClientRequest,
  maxBodyBytes: number,
  onTooLarge: () => void,
): void {
  let received = 0;
  const count = (chunk: Buffer): void => {
    received += chunk.length;
    if (received <= maxBodyBytes) return;
    req.off("data", count);
    req.unpipe(forwarded);
    // Paused, not destroyed: the socket must stay to carry the 413 (bodyLimit.ts).
    req.pause();
    onTooLarge();
  };
  req.pipe(forwarded);
  req.on("data", count);
}
