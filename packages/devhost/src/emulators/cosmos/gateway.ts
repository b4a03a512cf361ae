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
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(messageHeaders(reply.headers))) {
    if (value !== undefined) headers[name] = translator.responseHeader(name, value);
  }
  res.writeHead(reply.status, { ...headers, "content-length": reply.body.length });
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

/**
 * An http server (not yet listening) in front of `server`, which must be listening already: the translated
 * requests reach it on its loopback port, the direct ones through its request listener.
 */
export function createGateway(
  server: Server,
  translator: Translator,
  onRequest?: (request: IncomingMessage) => void,
): Gateway {
  const [serve] = server.listeners("request") as RequestListener[];
  if (!serve) throw new Error("the Cosmos DB stand-in server has no request listener");
  const agent = new http.Agent({ keepAlive: true });
  const backend = forwardTo((server.address() as AddressInfo).port, agent);
  const gateway = http.createServer((req, res) => {
    onRequest?.(req);
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
