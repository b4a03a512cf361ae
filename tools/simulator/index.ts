// The remote services simulator: this app's inventory, payment and shipping services over HTTP, with side effects
// applied once per Idempotency-Key, business rules, a ledger of every effect and injectable faults. It is what
// the app's INVENTORY_URL, PAYMENT_URL and SHIPPING_URL point at locally. Routes, rules and examples:
// docs/simulator.md.
import { setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { z } from "zod";
import { FaultRegistry, type Fault } from "./faults";
import { Ledger, type LedgerEntry } from "./ledger";
import {
  SERVICES,
  bookBody,
  cancelBody,
  chargeBody,
  describeIssues,
  faultSpec,
  refundBody,
  releaseBody,
  reserveBody,
  type FaultSpec,
  type Service,
} from "./schemas";
import { DEFAULT_PAYMENT_LIMIT, DEFAULT_SIMULATOR_PORT, DEFAULT_STOCK } from "./defaults";
import { RemoteServices, type Outcome } from "./services";

// The simulator's types are defined once, here and in its modules; tests and tools import them from here.
export type { Fault, Fault as InjectedFault } from "./faults";
export type { LedgerEntry } from "./ledger";
export type { FaultKind, FaultSpec, Service } from "./schemas";
export { OPERATIONS, SERVICES } from "./schemas";
export { DEFAULT_PAYMENT_LIMIT, DEFAULT_SIMULATOR_PORT, DEFAULT_STOCK } from "./defaults";
export { simulatorFaults, type SimulatorFaults } from "./faultsClient";
export const IDEMPOTENCY_HEADER = "idempotency-key";
const MAX_BODY_BYTES = 64 * 1024;

export interface SimulatorOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Default 7081; 0 picks an ephemeral port (tests). */
  port?: number;
  /** A charge whose amount exceeds this is declined (402); default 10000. */
  paymentLimit?: number;
  /** Initial stock per sku; a sku not listed has `defaultStock`. */
  stock?: Record<string, number>;
  /** Stock of every sku not in `stock`; default 1000. */
  defaultStock?: number;
  /** Source of randomness for probability faults; default Math.random. */
  random?: () => number;
}

export interface Simulator {
  /** http://<host>:<port>, no trailing slash. */
  url: string;
  port: number;
  /** Base URL of each service (the INVENTORY_URL, PAYMENT_URL, SHIPPING_URL settings): `${url}/${service}`. */
  serviceUrls: Record<Service, string>;
  /** The same entries as GET /_ledger. */
  ledger(): LedgerEntry[];
  /** Same as POST /_faults; throws on an invalid spec. */
  injectFault(spec: FaultSpec): Fault;
  faults(): Fault[];
  /** Same as DELETE /_faults/<id>; false when there is no such fault. */
  removeFault(id: string): boolean;
  clearFaults(): void;
  /** Same as DELETE /_ledger: forget the ledger, stock, closed orders and faults. */
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

type OperationHandler = (services: RemoteServices, body: never) => Outcome;
interface OperationRoute {
  schema: z.ZodType<{ orderId: string }>;
  run: OperationHandler;
}

// One entry per /<service>/<operation> route; the schema's output is what `run` receives.
const OPERATION_ROUTES: Record<string, OperationRoute> = {
  "inventory/reserve": route(reserveBody, (s, b) => s.reserve(b.orderId, b.items)),
  "inventory/release": route(releaseBody, (s, b) => s.release(b.orderId, b.reservationId)),
  "payment/charge": route(chargeBody, (s, b) => s.charge(b.orderId, b.amount, b.currency)),
  "payment/refund": route(refundBody, (s, b) => s.refund(b.orderId, b.chargeId)),
  "shipping/book": route(bookBody, (s, b) => s.book(b.orderId, b.address)),
  "shipping/cancel": route(cancelBody, (s, b) => s.cancel(b.orderId, b.trackingNumber)),
};

/** The routes the simulator serves, as "<service>/<operation>" (test/unit/process.test.ts checks them against the declaration). */
export const SIMULATED_OPERATIONS: readonly string[] = Object.keys(OPERATION_ROUTES);

function route<S extends z.ZodType<{ orderId: string }>>(
  schema: S,
  run: (services: RemoteServices, body: z.output<S>) => Outcome,
): OperationRoute {
  return { schema, run: run as OperationHandler };
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? "127.0.0.1";
  const random = opts.random ?? Math.random;
  const servicesOptions = {
    paymentLimit: opts.paymentLimit ?? DEFAULT_PAYMENT_LIMIT,
    stock: { ...(opts.stock ?? {}) },
    defaultStock: opts.defaultStock ?? DEFAULT_STOCK,
  };
  const newWorld = (): World => ({
    services: new RemoteServices(servicesOptions),
    ledger: new Ledger(),
    faults: new FaultRegistry(random),
  });
  let world = newWorld();
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

    const operation = OPERATION_ROUTES[path.slice(1)];
    if (method === "POST" && operation) {
      const [service, name] = path.slice(1).split("/") as [Service, string];
      return handleOperation(req, res, service, name, operation);
    }
    const stockMatch = /^\/inventory\/stock\/([^/]+)$/.exec(path);
    if (method === "GET" && stockMatch?.[1]) {
      const sku = decodeURIComponent(stockMatch[1]);
      return sendJson(res, 200, { sku, available: world.services.available(sku) });
    }
    // The limit lets a client (the dashboard's playground) make orders that are declined without a copy of it.
    if (path === "/_health" && method === "GET")
      return sendJson(res, 200, { status: "ok", paymentLimit: servicesOptions.paymentLimit });
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
    service: Service,
    name: string,
    operation: OperationRoute,
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
    const body = parse(operation.schema, raw);

    // Faults act before the operation, like a sick service or network in front of it, except
    // drop-response, which loses the reply of an operation that did run.
    const at = world;
    const decision = at.faults.decide(service, name, body.orderId);
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
        "InjectedTransient",
        `Injected transient fault ${fault.id} on ${service}/${name}`,
      );
    }
    if (fault?.kind === "permanent") {
      throw new HttpError(
        fault.status ?? 400,
        "InjectedPermanent",
        `Injected permanent fault ${fault.id} on ${service}/${name}`,
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
      () => operation.run(at.services, body as never),
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
    serviceUrls: Object.fromEntries(SERVICES.map((s) => [s, `${url}/${s}`])) as Record<Service, string>,
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

function sendEmpty(res: ServerResponse, status: number): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status);
  res.end();
}
