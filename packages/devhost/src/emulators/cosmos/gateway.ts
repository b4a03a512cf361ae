/**
 * A thin HTTP front for the Cosmos DB stand-in: it reads each client request whole, lets a translator change
 * it, answer it itself or forward it to the server behind (over a keep-alive loopback connection), and writes
 * the translator's reply. Request and response bodies are small JSON documents, so they are buffered; the
 * translator (cosmosProtocol.ts) sees plain values and no sockets.
 */
import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";

export interface GatewayRequest {
  method: string;
  /** Path and query string, as the client sent them. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface GatewayReply {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Sends a request to the server behind the gateway. */
export type Backend = (request: GatewayRequest) => Promise<GatewayReply>;

export type Translator = (request: GatewayRequest, backend: Backend) => Promise<GatewayReply>;

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

export function forwardTo(backendPort: number, agent: http.Agent): Backend {
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

function write(res: ServerResponse, reply: GatewayReply): void {
  res.writeHead(reply.status, { ...messageHeaders(reply.headers), "content-length": reply.body.length });
  res.end(reply.body);
}

/** An http server (not yet listening) that passes every request through `translate` to the backend port. */
export function createGateway(
  backendPort: number,
  translate: Translator,
  onRequest?: (request: IncomingMessage) => void,
): Gateway {
  const agent = new http.Agent({ keepAlive: true });
  const backend = forwardTo(backendPort, agent);
  const server = http.createServer((req, res) => {
    onRequest?.(req);
    readBody(req)
      .then((body) =>
        translate({ method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body }, backend),
      )
      .then(
        (reply) => write(res, reply),
        (error: unknown) => {
          const message = `Cosmos DB emulator gateway: ${error instanceof Error ? error.message : String(error)}`;
          write(res, {
            status: 500,
            headers: { "content-type": "application/json" },
            body: Buffer.from(JSON.stringify({ code: "InternalServerError", message })),
          });
        },
      );
  });
  return { server, dispose: () => agent.destroy() };
}
