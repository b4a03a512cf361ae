// The HTTP front of the devhost: one server on 127.0.0.1 that routes requests to HTTP-triggered functions
// as the Functions host does (`/<routePrefix>/<route>`, methods, route parameters, 404 for no route, 405
// for a route registered with other methods), hands the request over as the host's RpcHttpData so that
// @azure/functions builds the HttpRequest itself, and writes back the RpcHttpData the library made of the
// handler's HttpResponse. Other paths (the durable webhooks, the admin API) can be mounted under a prefix. Before
// any of that, it refuses what Kestrel refuses before the host sees a request: a bad Host header (hostHeader.ts)
// and a body over the size limit (bodyLimit.ts). An app with HTTP streaming on gets its requests through the
// worker's own HTTP server instead, bodies streamed both ways (httpStream.ts).
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Registration, RpcHttpData, RpcTypedData } from "../functionsCore";
import type { InvocationResult, InvokeRequest } from "../invocation";
import type { HostLogger } from "../logger";
import { declaresTooLarge, DEFAULT_BODY_SIZE_LIMIT, readLimitedBody, sendTooLarge } from "./bodyLimit";
import { requestOrigin } from "./hostHeader";
import { compareRoutes, compileRoute, type CompiledRoute } from "./httpRoutes";
import { formatSetCookie } from "./setCookie";
import { exchangeThroughWorker, streamedTriggerMetadata, type WorkerHttpProxy } from "./httpStream";

export interface HttpFunction {
  registration: Registration;
  /** Upper-case methods, or undefined for every method. */
  methods?: Set<string>;
  route: CompiledRoute;
  /** `/api/orders/{orderId}`: what the start-up listing prints. */
  displayRoute: string;
  /** Disabled by app setting: the route still matches, and answers 404 (startup/disabledFunctions.ts). */
  disabled?: true;
}

export type MountHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathAfterPrefix: string,
) => unknown;

export interface HttpServerOptions {
  host: string;
  port: number;
  routePrefix: string;
  functions: HttpFunction[];
  invoke: (registration: Registration, request: InvokeRequest) => Promise<InvocationResult>;
  logger: HostLogger;
  /** Extra handlers by path prefix (matched in any case), e.g. "/durabletask/" for the durable HTTP API. */
  mounts?: Record<string, MountHandler>;
  /**
   * Headers a request gets when it has none of them, the way the platform adds a signed-in user's identity
   * (auth.ts); a request carrying any of them keeps its own.
   */
  defaultHeaders?: Record<string, string>;
  /** Request bodies over this many bytes get 413 (bodyLimit.ts); default the host's 100 MB. */
  maxBodyBytes?: number;
  /** The worker's HTTP server when the app streams HTTP (httpStream.ts): requests to functions go through it. */
  workerHttp?: WorkerHttpProxy;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  /** Stops accepting requests; running ones get `graceMs` (default 2 s). Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

/** Builds the routing table entry of an HTTP-triggered registration. */
export function toHttpFunction(registration: Registration, routePrefix: string): HttpFunction {
  const trigger = registration.trigger;
  const route =
    typeof trigger.route === "string" && trigger.route.trim() !== "" ? trigger.route : registration.name;
  const full = [routePrefix, route.replace(/^\/+/, "")].filter((s) => s !== "").join("/");
  const methods = Array.isArray(trigger.methods)
    ? new Set((trigger.methods as unknown[]).map((m) => String(m).toUpperCase()))
    : undefined;
  return {
    registration,
    ...(methods ? { methods } : {}),
    route: compileRoute(full),
    displayRoute: `/${full}`,
  };
}

function splitPath(pathname: string): string[] | undefined {
  const trimmed = pathname.replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return [];
  try {
    return trimmed.split("/").map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

/**
 * The query as the host sends it beside the URL: one entry per name, repeated values joined by "," (ASP.NET's
 * StringValues). @azure/functions from 4.5 parses the URL instead; earlier versions read only this map.
 */
function queryMap(search: URLSearchParams): Record<string, string> {
  const map: Record<string, string> = {};
  for (const name of new Set(search.keys())) map[name] = search.getAll(name).join(",");
  return map;
}

function withDefaults(
  headers: Record<string, string>,
  defaults: Record<string, string> | undefined,
): Record<string, string> {
  if (!defaults || Object.keys(defaults).some((name) => name in headers)) return headers;
  return { ...headers, ...defaults };
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

function typedDataToBuffer(data: RpcTypedData | null | undefined): Buffer | undefined {
  if (!data) return undefined;
  if (data.bytes) return Buffer.from(data.bytes);
  if (typeof data.string === "string") return Buffer.from(data.string, "utf8");
  if (typeof data.json === "string") return Buffer.from(data.json, "utf8");
  if (typeof data.int === "number" || typeof data.double === "number")
    return Buffer.from(String(data.int ?? data.double));
  return undefined;
}

function writeRpcResponse(res: http.ServerResponse, response: RpcHttpData | undefined): void {
  if (!response) {
    // The handler returned nothing: the host answers 204 No Content.
    res.writeHead(204).end();
    return;
  }
  const status = Number(response.statusCode ?? "200") || 200;
  for (const [name, value] of Object.entries(response.headers ?? {})) res.setHeader(name, value);
  const cookies = (response.cookies ?? []).map(formatSetCookie);
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  const body = typedDataToBuffer(response.body);
  const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
  if (body && !noBody) res.setHeader("content-length", body.length);
  res.writeHead(status);
  res.end(noBody ? undefined : body);
}

function sendText(res: http.ServerResponse, status: number, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, headers).end();
}

function sendBadRequest(res: http.ServerResponse, problem: string): void {
  if (res.headersSent) return;
  res
    .writeHead(400, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(problem),
      connection: "close",
    })
    .end(problem);
}

/**
 * A request node's parser refused (a control character in a header, a malformed request line, ...): 400 with the
 * parser's reason, where node's own answer has no text. Too-large headers keep node's 431.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, text] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? ["431 Request Header Fields Too Large", "Request headers too large."]
      : ["400 Bad Request", `Bad request: ${error.message.replace(/[^\x20-\x7e]/g, "?")}.`];
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const functions = [...options.functions].sort((a, b) => compareRoutes(a.route, b.route));
  const mounts = Object.entries(options.mounts ?? {});
  const dashboardPath = `/${[options.routePrefix, "dashboard"].filter((s) => s !== "").join("/")}`;
  let baseUrl = "";

  const findRoute = (pathname: string, method: string) => {
    const segments = splitPath(pathname);
    if (!segments) return { kind: "none" as const };
    const allowed = new Set<string>();
    for (const fn of functions) {
      const params = fn.route.match(segments);
      if (!params) continue;
      if (!fn.methods || fn.methods.has(method)) return { kind: "found" as const, fn, params };
      fn.methods.forEach((m) => allowed.add(m));
    }
    return allowed.size > 0 ? { kind: "method" as const, allowed } : { kind: "none" as const };
  };

  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_BODY_SIZE_LIMIT;
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    // Checked before anything else, as the web server does: neither reaches a mount or the app.
    const target = requestOrigin(req, new URL(baseUrl).host);
    if ("problem" in target) {
      sendBadRequest(res, target.problem);
      return;
    }
    if (declaresTooLarge(req, maxBodyBytes)) {
      sendTooLarge(res, maxBodyBytes);
      return;
    }
    // Joined, not resolved: a target of "//other.host/x" must stay a path on this host.
    const url = new URL(`${target.origin}${target.pathAndQuery}`);
    const method = (req.method ?? "GET").toUpperCase();
    for (const [prefix, handler] of mounts) {
      // Paths match in any case, as in the host (ASP.NET routing).
      if (url.pathname.toLowerCase().startsWith(prefix.toLowerCase())) {
        await handler(req, res, url.pathname.slice(prefix.length) + url.search);
        return;
      }
    }
    if (url.pathname === "/" && (method === "GET" || method === "HEAD")) {
      const dashboard = findRoute(dashboardPath, "GET");
      if (dashboard.kind === "found") {
        sendText(res, 302, { location: dashboardPath });
        return;
      }
    }
    const route = findRoute(url.pathname, method);
    if (route.kind === "none") {
      sendText(res, 404);
      return;
    }
    if (route.kind === "method") {
      sendText(res, 405, { allow: [...route.allowed].join(", ") });
      return;
    }
    if (route.fn.disabled) {
      sendText(res, 404);
      return;
    }
    const headers = withDefaults(flattenHeaders(req.headers), options.defaultHeaders);
    const query = queryMap(url.searchParams);
    if (options.workerHttp) {
      // The body stays in the request, which goes to the worker's server; the invocation carries the rest.
      const invocationId = randomUUID();
      const triggerData: RpcTypedData = {
        http: { method, url: url.href, headers, params: route.params, query },
      };
      await exchangeThroughWorker({
        req,
        res,
        proxy: options.workerHttp,
        target: { invocationId, host: url.host, pathAndQuery: target.pathAndQuery },
        maxBodyBytes,
        logger: options.logger,
        invoke: () =>
          options.invoke(route.fn.registration, {
            invocationId,
            triggerData,
            triggerMetadata: streamedTriggerMetadata(headers, query, route.params),
            reason: "This function was programmatically called via the host APIs.",
          }),
      });
      return;
    }
    const body = await readLimitedBody(req, maxBodyBytes);
    if (body === "too-large") {
      sendTooLarge(res, maxBodyBytes);
      return;
    }
    const rpcHttp: RpcHttpData = {
      method,
      url: url.href,
      headers,
      params: route.params,
      query,
      ...(body.length > 0 ? { body: { bytes: body } } : {}),
    };
    const result = await options.invoke(route.fn.registration, {
      triggerData: { http: rpcHttp },
      reason: "This function was programmatically called via the host APIs.",
    });
    if (!result.succeeded) {
      sendText(res, 500);
      return;
    }
    writeRpcResponse(res, result.response?.returnValue?.http ?? undefined);
  };

  // The Host header is checked in `handle`, where the answer can say what is wrong with it.
  const server = http.createServer({ requireHostHeader: false }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.logger.error(
        `HTTP ${req.method} ${req.url} failed in the devhost: ${(error as Error).stack ?? String(error)}`,
      );
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.on("clientError", answerClientError);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${options.host}:${port}`;
  let stopping: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    stop: (graceMs = 2000) =>
      (stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive sockets would hold close() open; requests still running get `graceMs` to finish.
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), graceMs).unref();
      })),
  };
}
