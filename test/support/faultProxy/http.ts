/**
 * An HTTP proxy on 127.0.0.1 in front of the Cosmos DB stand-in (plain http), with fault rules armed at run time
 * (the why of each fault: ../faultProxy.ts). A request no active rule matches is forwarded as it came (method,
 * path, headers, body streamed) and its answer streamed back. The first active rule that matches decides
 * otherwise: answer an error status, stall, delay, or reset the connection. Rules are deterministic: they match
 * every request they describe until their count or duration is spent, or they are removed.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { cosmosErrorResponse, type CosmosErrorSpec, type RequestHead } from "./cosmos";

export type HttpFaultAction =
  /** Answer this error as the service would (cosmos.ts: throttled(), serviceUnavailable()...). */
  | { kind: "status"; error: CosmosErrorSpec }
  /**
   * Never answer: the half-open connection. Without `forward` the request never reaches the store; with it, it
   * does and only its answer is lost (a write that applied, which the client saw time out). The request is held
   * until the client gives up, or the rule is removed, cleared or its duration ends (then its connection is reset).
   */
  | { kind: "stall"; forward?: boolean }
  /** Hold the request this long, then forward it (unless the client gave up meanwhile). */
  | { kind: "delay"; ms: number }
  /** Reset the connection (RST): the client sees ECONNRESET with no answer. */
  | { kind: "reset" };

export interface HttpFaultRule {
  /** For messages and `rules()`; default "rule <n>". */
  name?: string;
  /** Methods it matches (any case); default all. */
  method?: string | string[];
  /** Tested against the path and query: /\/docs/ hits document operations, /\/colls\/state\// one container. */
  path?: RegExp;
  /** Any other test of the request's head (cosmos.ts: isOperation("create")). */
  when?: (head: RequestHead) => boolean;
  action: HttpFaultAction;
  /** Matches at most this many requests, then retires. */
  count?: number;
  /** Retires this long after it is armed. */
  durationMs?: number;
}

/** An armed rule: its hits so far, whether it still matches, and how to retire it early. */
export interface ArmedRule {
  readonly name: string;
  readonly hits: number;
  readonly active: boolean;
  /** Retires the rule; requests it stalls are reset. */
  remove(): void;
}

export interface HttpProxyStats {
  requests: number;
  forwarded: number;
  /** Requests a rule took. */
  faulted: number;
  /** Requests held by stall rules right now. */
  stalled: number;
}

export interface HttpFaultProxy {
  /** http://127.0.0.1:<port>, the endpoint to give a client instead of the target's. */
  readonly url: string;
  readonly port: number;
  add(rule: HttpFaultRule): ArmedRule;
  /** The rules armed since start or the last clear(), retired ones included (their hits stay readable). */
  rules(): ArmedRule[];
  /** Retires every rule and resets every stalled request. */
  clear(): void;
  stats(): HttpProxyStats;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

interface Rule {
  spec: HttpFaultRule;
  name: string;
  hits: number;
  retired: boolean;
  expires: number | undefined;
  stalled: Set<Socket>;
}

const active = (rule: Rule): boolean =>
  !rule.retired &&
  (rule.spec.count === undefined || rule.hits < rule.spec.count) &&
  (rule.expires === undefined || Date.now() < rule.expires);

function matches(rule: Rule, head: RequestHead): boolean {
  const { method, path, when } = rule.spec;
  if (method !== undefined) {
    const methods = (Array.isArray(method) ? method : [method]).map((m) => m.toUpperCase());
    if (!methods.includes(head.method.toUpperCase())) return false;
  }
  if (path && !path.test(head.path)) return false;
  return !when || when(head);
}

/** Destroys with an RST where the socket still has a TCP handle. */
function reset(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

export async function startHttpFaultProxy(target: string): Promise<HttpFaultProxy> {
  const targetUrl = new URL(target);
  // Kept-alive connections to the target, as the SDK keeps its own to the proxy.
  const agent = new http.Agent({ keepAlive: true });
  let rules: Rule[] = [];
  const stats = { requests: 0, forwarded: 0, faulted: 0 };
  const sockets = new Set<Socket>();

  const forward = (req: http.IncomingMessage, res: http.ServerResponse | undefined): void => {
    stats.forwarded++;
    const upstream = http.request(
      {
        host: targetUrl.hostname,
        port: targetUrl.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        if (!res || res.destroyed) {
          answer.resume();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    // The target failing mid-request is the client's connection failing: reset it. A client that goes away
    // mid-body leaves a request the target cannot finish: abort it.
    upstream.on("error", () => reset(req.socket));
    req.on("error", () => upstream.destroy());
    req.pipe(upstream);
    // A client that gives up while the target works leaves nothing to answer; the request carries on regardless,
    // as it would at the service.
  };

  const fault = (rule: Rule, req: http.IncomingMessage, res: http.ServerResponse): void => {
    stats.faulted++;
    const { action } = rule.spec;
    switch (action.kind) {
      case "status": {
        const answer = cosmosErrorResponse(action.error, req.url ?? "/");
        // The body was not read: drain it so the kept-alive connection stays usable.
        req.resume();
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      }
      case "reset":
        reset(req.socket);
        return;
      case "delay": {
        const timer = setTimeout(() => {
          if (!req.socket.destroyed) forward(req, res);
        }, action.ms);
        req.socket.once("close", () => clearTimeout(timer));
        return;
      }
      case "stall": {
        const socket = req.socket;
        rule.stalled.add(socket);
        socket.once("close", () => rule.stalled.delete(socket));
        if (action.forward) forward(req, undefined);
        else req.resume();
        return;
      }
    }
  };

  const server = http.createServer({ keepAlive: true }, (req, res) => {
    stats.requests++;
    // A client that gives up (a timeout, a reset) errors its request and response; that is the client's business.
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    const head: RequestHead = { method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers };
    const rule = rules.find((r) => active(r) && matches(r, head));
    if (!rule) {
      forward(req, res);
      return;
    }
    rule.hits++;
    fault(rule, req, res);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  const retire = (rule: Rule): void => {
    rule.retired = true;
    for (const socket of rule.stalled) reset(socket);
    rule.stalled.clear();
  };
  const view = (rule: Rule): ArmedRule => ({
    name: rule.name,
    get hits() {
      return rule.hits;
    },
    get active() {
      return active(rule);
    },
    remove: () => retire(rule),
  });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    add(spec) {
      const rule: Rule = {
        spec,
        name: spec.name ?? `rule ${rules.length + 1}`,
        hits: 0,
        retired: false,
        expires: spec.durationMs === undefined ? undefined : Date.now() + spec.durationMs,
        stalled: new Set(),
      };
      rules.push(rule);
      // When its time is up, a stall rule lets go of what it holds, as retiring it early would.
      if (spec.durationMs !== undefined) setTimeout(() => retire(rule), spec.durationMs).unref();
      return view(rule);
    },
    rules: () => rules.map(view),
    clear() {
      rules.forEach(retire);
      rules = [];
    },
    stats: () => ({
      ...stats,
      stalled: rules.reduce((n, rule) => n + rule.stalled.size, 0),
    }),
    async close() {
      rules.forEach(retire);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await closed;
    },
  };
}
