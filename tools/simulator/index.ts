// The remote services simulator: every service of the process declaration (src/domain/process.ts) over HTTP,
// with side effects applied once per Idempotency-Key, a ledger of every effect and injectable faults. It is what
// the app's <SERVICE>_URL settings point at locally. Each declared operation is served by the generic do/undo
// (./services.ts); the sample's business rules are optional behaviours of their services (./behaviours.ts).
// Routes, rules and examples: docs/simulator.md.
import { setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { z } from "zod";
import { BEHAVIOURS, type BehaviourOptions } from "./behaviours";
import { FaultRegistry, type Fault } from "./faults";
import { Ledger, type LedgerEntry } from "./ledger";
import { describeIssues, faultSpecFor, genericBody, type FaultSpec } from "./schemas";
import { DEFAULT_SIMULATOR_PORT } from "./defaults";
import { DECLARED_SERVICES, routesOf, type Role, type ServedServices, type Service } from "./served";
import { RemoteServices, idFieldOf } from "./services";

// The simulator's types are defined once, here and in its modules; tests and tools import them from here.
export type { Fault, Fault as InjectedFault } from "./faults";
export type { LedgerEntry } from "./ledger";
export type { FaultKind, FaultSpec } from "./schemas";
export type { Role, ServedServices, Service } from "./served";
export { DECLARED_SERVICES, OPERATIONS, SERVICES } from "./served";
export { BEHAVIOURS } from "./behaviours";
export { DEFAULT_PAYMENT_LIMIT, DEFAULT_SIMULATOR_PORT, DEFAULT_STOCK } from "./defaults";
export { simulatorFaults, type SimulatorFaults } from "./faultsClient";
export const IDEMPOTENCY_HEADER = "idempotency-key";
const MAX_BODY_BYTES = 64 * 1024;

export interface SimulatorOptions extends BehaviourOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Default 7081; 0 picks an ephemeral port (tests). */
  port?: number;
  /** Source of randomness for probability faults; default Math.random. */
  random?: () => number;
  /**
   * The services to serve, service → operation → do or undo; default the declaration (DECLARED_SERVICES).
   * A service with an entry in BEHAVIOURS gets its rules; any other gets the generic do/undo.
   */
  services?: ServedServices;
}

export interface Simulator {
  /** http://<host>:<port>, no trailing slash. */
  url: string;
  port: number;
  /** Base URL of each service (its `<SERVICE>_URL` setting): `${url}/${service}`. */
  serviceUrls: Record<Service, string> & Record<string, string>;
  /** The same entries as GET /_ledger. */
  ledger(): LedgerEntry[];
  /** Same as POST /_faults; throws on an invalid spec. */
  injectFault(spec: FaultSpec): Fault;
  faults(): Fault[];
  /** Same as DELETE /_faults/<id>; false when there is no such fault. */
  removeFault(id: string): boolean;
  clearFaults(): void;
  /** Same as DELETE /_ledger: forget the ledger, the behaviours' state (stock), closed orders and faults. */
  reset(): void;
  stop(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface World {
  services: RemoteServices;
  ledger: Ledger;
  faults: FaultRegistry;
}

/** The routes the declaration makes the simulator serve, as "<service>/<operation>". */
export const SIMULATED_OPERATIONS: readonly string[] = routesOf(DECLARED_SERVICES);

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? "127.0.0.1";
  const random = opts.random ?? Math.random;
  const served = opts.services ?? DECLARED_SERVICES;
  const faultSpec = faultSpecFor(served);
  const newWorld = (): World => ({
    services: new RemoteServices(
      Object.fromEntries(
        Object.keys(served)
          .filter((s) => Object.hasOwn(BEHAVIOURS, s))
          .map((s) => [s, BEHAVIOURS[s]!(opts)]),
      ),
    ),
    ledger: new Ledger(),
    faults: new FaultRegistry(random),
  });
  let world = newWorld();
  const roleOf = (service: string, operation: string): Role | undefined =>
    Object.hasOwn(served, service) && Object.hasOwn(served[service]!, operation)
      ? served[service]![operation]
      : undefined;
  // Aborted on stop(): ends pending latency delays so nothing outlives the server.
  const stopping = new AbortController();
  // Every pending latency or hang delay listens on it; hundreds at once are expected, not a leak.
  setMaxListeners(0, stopping.signal);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://simulator");
    const path = url.pathname.replace(/\/+$/, "");
    const method = req.method ?? "GET";

    // The dashboard's fault panel calls the admin routes from the devhost's origin (another port).
    if (ADMIN_ROUTE.test(path)) {
      allowLoopbackOrigin(req, res);
      if (method === "OPTIONS") return sendPreflight(res);
    }

    // /<service>/<rest>: an operation (POST) or a behaviour's own read (GET), such as inventory's stock.
    const [, service = "", rest = ""] = /^\/([^/_][^/]*)\/(.+)$/.exec(path) ?? [];
    const role = roleOf(service, rest);
    if (method === "POST" && role) return handleOperation(req, res, service, rest, role);
    const read = method === "GET" ? world.services.behaviourOf(service)?.get?.(rest) : undefined;
    if (read) return sendJson(res, 200, read);

    if (path === "/_health" && method === "GET") {
      const fromBehaviours = Object.keys(served).map((s) => world.services.behaviourOf(s)?.health);
      return sendJson(res, 200, Object.assign({ status: "ok" }, ...fromBehaviours));
    }
    if (path === "/_ledger" && method === "GET") return sendJson(res, 200, { entries: world.ledger.list() });
    if (path === "/_ledger" && method === "DELETE") {
      world = newWorld();
      return sendEmpty(res, 204);
    }
    if (path === "/_faults" && method === "GET") return sendJson(res, 200, { faults: world.faults.list() });
    if (path === "/_faults" && method === "POST") {
      const spec = parse(faultSpec, await readJson(req));
      return sendJson(res, 201, world.faults.add(spec, new Date()));
    }
    if (path === "/_faults" && method === "DELETE") {
      world.faults.clear();
      return sendEmpty(res, 204);
    }
    const faultMatch = /^\/_faults\/([^/]+)$/.exec(path);
    if (method === "DELETE" && faultMatch?.[1]) {
      const id = decodeURIComponent(faultMatch[1]);
      if (!world.faults.remove(id)) throw new HttpError(404, "NotFound", `No fault ${id}`);
      return sendEmpty(res, 204);
    }
    throw new HttpError(404, "NotFound", `No route ${method} ${url.pathname}`);
  };

  const handleOperation = async (
    req: IncomingMessage,
    res: ServerResponse,
    service: string,
    name: string,
    role: Role,
  ): Promise<void> => {
    const key = req.headers[IDEMPOTENCY_HEADER];
    const raw = await readJson(req);
    if (typeof key !== "string" || key.trim() === "") {
      throw new HttpError(
        400,
        "BadRequest",
        "Idempotency-Key header is required on every side-effecting request",
      );
    }
    if (key.length > 255)
      throw new HttpError(400, "BadRequest", "Idempotency-Key header: expected at most 255 characters");
    // A do's body is its behaviour's when it has one (the fields its rules read); otherwise only orderId counts.
    const at = world;
    const behaviour = at.services.behaviourOf(service);
    const schema = (role === "do" ? behaviour?.doBody : undefined) ?? genericBody(role, idFieldOf(behaviour));
    const body = parse(schema, raw) as { orderId: string } & Record<string, unknown>;

    // Faults act before the operation, like a sick service or network in front of it, except
    // drop-response, which loses the reply of an operation that did run.
    const decision = at.faults.decide(service, name, body.orderId, new Date());
    if (decision.delayMs > 0) {
      try {
        await delay(decision.delayMs, undefined, { signal: stopping.signal });
      } catch {
        return; // stopping: the socket is being destroyed
      }
    }
    const fault = decision.outcome;
    if (fault?.kind === "hang") return; // never answered; stop() or the client ends it
    if (fault?.kind === "transient") {
      throw new HttpError(
        fault.status ?? 503,
        fault.code ?? "InjectedTransient",
        fault.message ?? `Injected transient fault ${fault.id} on ${service}/${name}`,
      );
    }
    if (fault?.kind === "permanent") {
      throw new HttpError(
        fault.status ?? 400,
        fault.code ?? "InjectedPermanent",
        fault.message ?? `Injected permanent fault ${fault.id} on ${service}/${name}`,
      );
    }
    if (fault?.kind === "answer") {
      return sendText(
        res,
        fault.status ?? 200,
        fault.contentType ?? DEFAULT_ANSWER.contentType,
        fault.body ?? DEFAULT_ANSWER.body,
      );
    }

    const traceparent = req.headers.traceparent;
    const recorded = at.ledger.run(
      {
        service,
        operation: name,
        key,
        orderId: body.orderId,
        body: raw,
        traceparent: typeof traceparent === "string" ? traceparent.slice(0, 128) : undefined,
      },
      new Date(),
      () => at.services.run(service, role, body),
    );
    if (fault?.kind === "drop-response") {
      req.socket.destroy();
      return;
    }
    if (recorded.kind === "replay") res.setHeader("Idempotent-Replayed", "true");
    sendJson(res, recorded.response.status, recorded.response.body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) {
        // The rest of an oversized body is still on the wire: do not reuse the connection.
        if (err.status === 413) res.setHeader("connection", "close");
        sendJson(res, err.status, { code: err.code, message: err.message });
      } else {
        sendJson(res, 500, {
          code: "InternalError",
          message: err instanceof Error ? err.message : String(err),
        });
      }
    });
  });

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    const port = opts.port ?? DEFAULT_SIMULATOR_PORT;
    const onError = (err: Error): void =>
      reject(new Error(`Simulator cannot listen on ${host}:${port}: ${err.message}`));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve(server.address() as AddressInfo);
    });
  });
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= new Promise<void>((resolve, reject) => {
      stopping.abort();
      server.close((err) => (err ? reject(err) : resolve()));
      // Hung requests and keep-alive sockets would hold close() open forever.
      server.closeAllConnections();
    }));

  return {
    url,
    port: address.port,
    serviceUrls: Object.fromEntries(
      Object.keys(served).map((s) => [s, `${url}/${s}`]),
    ) as Simulator["serviceUrls"],
    ledger: () => world.ledger.list(),
    injectFault: (spec) => world.faults.add(parse(faultSpec, spec), new Date()),
    faults: () => world.faults.list(),
    removeFault: (id) => world.faults.remove(id),
    clearFaults: () => world.faults.clear(),
    reset: () => {
      world = newWorld();
    },
    stop,
  };
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, "BadRequest", describeIssues(result.error));
  return result.data;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, "PayloadTooLarge", `body: expected at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(
      400,
      "BadRequest",
      `body: expected JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return; // the client is gone; the outcome is in the ledger
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Routes a browser page may call across origins: faults, ledger and health, never the services themselves. */
const ADMIN_ROUTE = /^\/(_faults(\/[^/]+)?|_ledger|_health)$/;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * CORS for pages served from this machine only (the devhost's dashboard): the Origin is echoed when its host is
 * loopback, so a web page from elsewhere that a developer happens to open cannot read the ledger or arm faults.
 */
function allowLoopbackOrigin(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  res.setHeader("vary", "origin");
  if (!origin) return;
  try {
    if (LOOPBACK_HOSTS.has(new URL(origin).hostname)) res.setHeader("access-control-allow-origin", origin);
  } catch {
    // Not a URL ("null" from a sandboxed frame): no CORS headers.
  }
}

function sendPreflight(res: ServerResponse): void {
  res.writeHead(204, {
    "access-control-allow-methods": "GET, POST, DELETE",
    "access-control-allow-headers": "content-type",
    "access-control-max-age": "600",
  });
  res.end();
}

/** What an `answer` fault sends unless told otherwise: the error page of a proxy in front of the service. */
const DEFAULT_ANSWER = {
  contentType: "text/html; charset=utf-8",
  body: "<html><head><title>Welcome</title></head><body><p>The page you asked for.</p></body></html>",
};

/** An answer as given: `contentType` "" sends none; a 204 or 304 sends no body, whatever it is told. */
function sendText(res: ServerResponse, status: number, contentType: string, body: string): void {
  if (res.headersSent || res.destroyed) return;
  const bodyless = status === 204 || status === 304;
  res.writeHead(status, {
    ...(contentType === "" ? {} : { "content-type": contentType }),
    ...(bodyless ? {} : { "content-length": Buffer.byteLength(body) }),
  });
  res.end(bodyless ? undefined : body);
}

function sendEmpty(res: ServerResponse, status: number): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status);
  res.end();
}
