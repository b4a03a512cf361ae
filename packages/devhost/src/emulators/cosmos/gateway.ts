/**
 * A thin HTTP front for the Cosmos DB stand-in server. For each client request the translator
 * (cosmosProtocol.ts) decides from its method, path and headers:
 *  - direct: the request goes, as it is or with other headers, to the server's own request listener in this
 *    process, which reads the body and writes the response itself (no second HTTP exchange: most requests, so
 *    the gateway costs them next to nothing);
 *  - translated: the gateway reads the body, and the translator answers itself or sends a changed request to
 *    the server over a keep-alive loopback connection and changes the reply. Bodies are small JSON documents,
 *    so they are buffered; the translator sees plain values and no sockets.
 * Either way each response header passes through the translator's responseHeader on its way to the client.
 * Observers (benchmarks) may see each request as it arrives and each response once it has been sent.
 */
import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

export interface RequestHead {
  method: string;
  /** Path and query string, as the client sent them. */
  url: string;
  headers: IncomingHttpHeaders;
}

export interface GatewayRequest extends RequestHead {
  body: Buffer;
}

export interface GatewayReply {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Sends a request to the server behind the gateway. */
export type Backend = (request: GatewayRequest) => Promise<GatewayReply>;

/** A response header's value, as ServerResponse.setHeader takes it. */
export type HeaderValue = number | string | readonly string[];

export interface Translator {
  /** The headers to hand the request to the server with, unread; undefined when it must be translated. */
  direct(head: RequestHead): IncomingHttpHeaders | undefined;
  translate(request: GatewayRequest, backend: Backend): Promise<GatewayReply>;
  /** One response header as the client is to see it, on direct and translated replies alike. */
  responseHeader<V extends HeaderValue>(name: string, value: V): V | string;
}

/** What the client was sent for one request: status, headers as the translator left them, and body size. */
export interface ServedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  bodyBytes: number;
  /**
   * The body as sent, put together when asked (a benchmark samples a few documents; the rest cost nothing but the
   * references kept until the observer returns).
   */
  body(): Buffer;
}

/** Callers that count or weigh the gateway's traffic; neither can change a request or its answer. */
export interface GatewayObservers {
  /** Each request as it arrives, before anything reads its body. */
  onRequest?: (request: IncomingMessage) => void;
  /** Each request again once its response has been sent in full (not for one whose client went away first). */
  onResponse?: (request: IncomingMessage, response: ServedResponse) => void;
}

export interface Gateway {
  server: Server;
  /** Ends the keep-alive connections to the server behind. */
  dispose(): void;
}

// Headers of one connection, not of the message: never forwarded (RFC 9110 §7.6.1). Content-Length is
// recomputed for the body actually sent.
const CONNECTION_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "content-length",
]);

function messageHeaders<T extends IncomingHttpHeaders | OutgoingHttpHeaders>(headers: T): T {
  const kept = { ...headers };
  for (const name of Object.keys(kept)) if (CONNECTION_HEADERS.has(name)) delete kept[name];
  return kept;
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.once("end", () => resolve(Buffer.concat(chunks)));
    stream.once("error", reject);
  });
}

function forwardTo(backendPort: number, agent: http.Agent): Backend {
  return (request) =>
    new Promise((resolve, reject) => {
      const outgoing = http.request(
        {
          host: "127.0.0.1",
          port: backendPort,
          method: request.method,
          path: request.url,
          headers: { ...messageHeaders(request.headers), "content-length": request.body.length },
          agent,
        },
        (response) => {
          readBody(response).then(
            (body) =>
              resolve({
                status: response.statusCode ?? 500,
                headers: messageHeaders(response.headers),
                body,
              }),
            reject,
          );
        },
      );
      outgoing.once("error", reject);
      outgoing.end(request.body);
    });
}

function write(res: ServerResponse, reply: GatewayReply, translator: Translator): void {
  // Set one by one rather than passed to writeHead, so that an observer reads them back as for a direct reply.
  for (const [name, value] of Object.entries(messageHeaders(reply.headers))) {
    if (value !== undefined) res.setHeader(name, translator.responseHeader(name, value));
  }
  res.setHeader("content-length", reply.body.length);
  res.writeHead(reply.status);
  res.end(reply.body);
}

/**
 * The response, for the server's own request listener, with each header it sets passed through the
 * translator first: the server sets its headers one by one before it writes the body.
 */
function translatingHeaders(res: ServerResponse, translator: Translator): ServerResponse {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) => setHeader(name, translator.responseHeader(name, value));
  return res;
}

const chunkBytes = (chunk: unknown, encoding: unknown): number =>
  typeof chunk === "string"
    ? Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
    : chunk instanceof Uint8Array
      ? chunk.byteLength
      : 0;

/**
 * Counts the body bytes written to `res` (the server's own listener writes direct replies, `write` the
 * translated ones) and reports the response once it is finished.
 */
function observeResponse(
  req: IncomingMessage,
  res: ServerResponse,
  onResponse: NonNullable<GatewayObservers["onResponse"]>,
): void {
  let bodyBytes = 0;
  // References only: the bytes are put together if the observer asks for them.
  const chunks: Array<{ chunk: string | Uint8Array; encoding: BufferEncoding }> = [];
  const keep = (chunk: unknown, encoding: unknown): void => {
    const bytes = chunkBytes(chunk, encoding);
    if (bytes === 0) return;
    bodyBytes += bytes;
    chunks.push({
      chunk: chunk as string | Uint8Array,
      encoding: typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8",
    });
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return write(...args);
  }) as ServerResponse["write"];
  res.end = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return end(...args);
  }) as ServerResponse["end"];
  res.once("finish", () =>
    onResponse(req, {
      status: res.statusCode,
      headers: res.getHeaders(),
      bodyBytes,
      body: () =>
        Buffer.concat(
          chunks.map(({ chunk, encoding }) =>
            typeof chunk === "string"
              ? Buffer.from(chunk, encoding)
              : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
          ),
        ),
    }),
  );
}

/**
 * An http server (not yet listening) in front of `server`, which must be listening already: the translated
 * requests reach it on its loopback port, the direct ones through its request listener.
 */
export function createGateway(
  server: Server,
  translator: Translator,
  observers: GatewayObservers = {},
): Gateway {
  const { onRequest, onResponse } = observers;
  const [serve] = server.listeners("request") as RequestListener[];
  if (!serve) throw new Error("the Cosmos DB stand-in server has no request listener");
  const agent = new http.Agent({ keepAlive: true });
  const backend = forwardTo((server.address() as AddressInfo).port, agent);
  const gateway = http.createServer((req, res) => {
    onRequest?.(req);
    if (onResponse) observeResponse(req, res, onResponse);
    const head = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers };
    const headers = translator.direct(head);
    if (headers) {
      req.headers = headers;
      serve(req, translatingHeaders(res, translator));
      return;
    }
    readBody(req)
      .then((body) => translator.translate({ ...head, body }, backend))
      .then(
        (reply) => write(res, reply, translator),
        (error: unknown) => {
          const message = `Cosmos DB emulator gateway: ${error instanceof Error ? error.message : String(error)}`;
          write(
            res,
            {
              status: 500,
              headers: { "content-type": "application/json" },
              body: Buffer.from(JSON.stringify({ code: "InternalServerError", message })),
            },
            translator,
          );
        },
      );
  });
  return { server: gateway, dispose: () => agent.destroy() };
}
