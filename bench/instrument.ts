/**
 * Counters on the emulators of this process, for "requests per order" figures: every HTTP request the Cosmos DB
 * stand-in serves (through its onRequest hook) and the size of what it answered (its onResponse hook), and every
 * message the Service Bus emulator's queues accept, drop as duplicates, hand to a receiver or settle (by
 * wrapping MessageQueue's methods). The counting is benchmark instrumentation only; the emulators behave
 * exactly as without it.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { MessageQueue, type ServedResponse } from "devhost/emulators";

/** Real payloads kept per kind while counting: enough to find one of about the mean size, few enough to cost nothing. */
const SAMPLES_PER_KIND = 24;

/**
 * A few of the payloads of each kind (a request kind, a queue), chosen at random among all of that kind (reservoir
 * sampling), and the mean size of all of them: `typical` is the sample nearest that mean. A payload is only made
 * (parsed) when it is kept.
 */
export class PayloadSamples<T> {
  private readonly kinds = new Map<
    string,
    { seen: number; bytes: number; kept: Array<{ bytes: number; value: T }> }
  >();

  offer(kind: string, bytes: number, make: () => T | undefined): void {
    const entry = this.kinds.get(kind) ?? { seen: 0, bytes: 0, kept: [] };
    this.kinds.set(kind, entry);
    entry.seen++;
    entry.bytes += bytes;
    const slot =
      entry.kept.length < SAMPLES_PER_KIND ? entry.kept.length : Math.floor(Math.random() * entry.seen);
    if (slot >= SAMPLES_PER_KIND) return;
    const value = make();
    if (value !== undefined) entry.kept[slot] = { bytes, value };
  }

  /** Each kind's sample nearest the mean size of its kind. */
  typical(): Record<string, T> {
    const chosen: Record<string, T> = {};
    for (const [kind, { seen, bytes, kept }] of this.kinds) {
      const mean = bytes / seen;
      const nearest = kept.reduce<{ bytes: number; value: T } | undefined>(
        (best, sample) =>
          !best || Math.abs(sample.bytes - mean) < Math.abs(best.bytes - mean) ? sample : best,
        undefined,
      );
      if (nearest) chosen[kind] = nearest.value;
    }
    return chosen;
  }

  clear(): void {
    this.kinds.clear();
  }
}

/** A message as its sender set it: what the order shape sends in its place (bench/orderShape/app.ts). */
export interface SampleMessage {
  body: unknown;
  contentType?: string;
  correlationId?: string;
  subject?: string;
  applicationProperties?: Record<string, unknown>;
}

/** The body (JSON when it parses, else the text) and the properties a sender sets, of a message the emulator took. */
function sampleMessage(message: Parameters<MessageQueue["send"]>[0]): SampleMessage | undefined {
  const text = message.bodyText();
  if (text === undefined) return undefined;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // A text body is sent as text.
  }
  const system = message.systemProperties();
  const applicationProperties = message.applicationProperties();
  const textOf = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    body,
    ...(textOf(system.ContentType) ? { contentType: textOf(system.ContentType) } : {}),
    ...(textOf(system.CorrelationId) ? { correlationId: textOf(system.CorrelationId) } : {}),
    ...(textOf(system.Label) ? { subject: textOf(system.Label) } : {}),
    ...(Object.keys(applicationProperties).length > 0 ? { applicationProperties } : {}),
  };
}

/** The properties Cosmos DB adds to every document it stores; a writer never sends them. */
const SYSTEM_DOCUMENT_PROPERTIES = ["_rid", "_self", "_etag", "_attachments", "_ts"];

/** A stored document as its writer sent it: the response to a create or replace, its system properties left out. */
function sentDocument(stored: Buffer): Record<string, unknown> | undefined {
  try {
    const document = JSON.parse(stored.toString("utf8")) as Record<string, unknown>;
    for (const name of SYSTEM_DOCUMENT_PROPERTIES) delete document[name];
    return document;
  } catch {
    return undefined;
  }
}

export interface BusCounts {
  /** Messages enqueued (duplicates excluded; dead-letter moves are not sends). */
  sent: number;
  /** Sends that duplicate detection dropped. */
  duplicates: number;
  /** Messages handed to a receiver (peek-lock or receive-and-delete). */
  deliveries: number;
  /** Peek-lock deliveries settled as done. */
  completes: number;
  /** Any other settlement: abandoned, released, deferred or dead-lettered (a lapsed lock counts as abandoned). */
  otherSettlements: number;
  lockRenewals: number;
  /** Bytes of the messages enqueued, as a receiver would get them without the broker's annotations. */
  sentBytes: number;
  largestMessageBytes: number;
  /** Messages enqueued per queue. */
  sentByQueue: Record<string, number>;
}

const zero = (): BusCounts => ({
  sent: 0,
  duplicates: 0,
  deliveries: 0,
  completes: 0,
  otherSettlements: 0,
  lockRenewals: 0,
  sentBytes: 0,
  largestMessageBytes: 0,
  sentByQueue: {},
});
let bus = zero();
/** A few real messages of each queue, the bodies and properties its senders set. */
const messageSamples = new PayloadSamples<SampleMessage>();
let installed = false;

/** Each counted method of MessageQueue, wrapped once per process: `count` runs after the method returned. */
function wrap<
  K extends "send" | "receive" | "complete" | "abandon" | "release" | "defer" | "deadLetter" | "renewLock",
>(
  name: K,
  count: (
    queue: MessageQueue,
    args: Parameters<MessageQueue[K]>,
    result: ReturnType<MessageQueue[K]>,
  ) => void,
): void {
  const proto = MessageQueue.prototype as unknown as Record<string, unknown>;
  const original = proto[name];
  if (typeof original !== "function")
    throw new Error(`MessageQueue has no ${name} to count: update bench/instrument.ts`);
  proto[name] = function (this: MessageQueue, ...args: Parameters<MessageQueue[K]>) {
    const result = (original as (...a: unknown[]) => ReturnType<MessageQueue[K]>).apply(this, args);
    count(this, args, result);
    return result;
  };
}

/**
 * Wraps MessageQueue's methods once per process; the counters (and the sampled messages: one of about the mean size
 * per queue, `samples`) start anew on reset.
 */
export function countServiceBus(): {
  counts(): BusCounts;
  samples(): Record<string, SampleMessage>;
  reset(): void;
} {
  if (!installed) {
    wrap("send", (queue, [message], stored) => {
      if (!stored) {
        bus.duplicates++;
        return;
      }
      bus.sent++;
      bus.sentByQueue[queue.name] = (bus.sentByQueue[queue.name] ?? 0) + 1;
      // The size a receiver sees, less the broker's own annotations: what the sender's bytes amount to.
      const bytes = message.encode({ deliveryCount: 0, timeToLiveMs: undefined, annotations: {} }).length;
      messageSamples.offer(queue.name, bytes, () => sampleMessage(message));
      bus.sentBytes += bytes;
      bus.largestMessageBytes = Math.max(bus.largestMessageBytes, bytes);
    });
    wrap("receive", (_queue, _args, stored) => {
      if (stored) bus.deliveries++;
    });
    wrap("complete", () => bus.completes++);
    for (const name of ["abandon", "release", "defer", "deadLetter"] as const)
      wrap(name, () => bus.otherSettlements++);
    wrap("renewLock", () => bus.lockRenewals++);
    installed = true;
  }
  return {
    counts: () => ({ ...bus, sentByQueue: { ...bus.sentByQueue } }),
    samples: () => messageSamples.typical(),
    reset: () => {
      bus = zero();
      messageSamples.clear();
    },
  };
}

/** User-agent suffix of the benchmark's own Cosmos DB client, whose requests are not the app's. */
export const OBSERVER_USER_AGENT = "bench-observer";

/** What the stand-in answered to the requests of one kind. */
export interface ServedTally {
  responses: number;
  /** Answers with a status of 400 or more (a 409 create, a 412 replace, a 404 read). */
  failed: number;
  /** The rest are the successful answers: their request bodies (Content-Length; @azure/cosmos sends it). */
  requestBytes: number;
  responseBytes: number;
  /** Items in the successful query and read-feed pages (x-ms-item-count). */
  items: number;
}

/** Counts the app's requests to the Cosmos DB stand-in (the benchmark's own are told apart by user agent). */
export class StoreRequestCounter {
  count = 0;
  /** The same requests by kind ("POST docs state", "GET docs leases", ...), to see where an order's requests go. */
  readonly byKind = new Map<string, number>();
  /** The answers to them by kind, with their sizes, to weigh each kind as Cosmos DB charges it. */
  readonly served = new Map<string, ServedTally>();
  /** A few of the documents each create and replace kind wrote, as their writers sent them. */
  private readonly documents = new PayloadSamples<Record<string, unknown>>();
  readonly onRequest = (request: IncomingMessage): void => {
    if (isObserver(request)) return;
    this.count++;
    const kind = requestKind(request);
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
  };
  readonly onResponse = (request: IncomingMessage, response: ServedResponse): void => {
    if (isObserver(request)) return;
    const kind = requestKind(request);
    const tally = this.served.get(kind) ?? {
      responses: 0,
      failed: 0,
      requestBytes: 0,
      responseBytes: 0,
      items: 0,
    };
    tally.responses++;
    this.served.set(kind, tally);
    // A refusal's body is an error message, not a document: only answers that did the work are weighed.
    if (response.status >= 400) {
      tally.failed++;
      return;
    }
    const requestBytes = Number(request.headers["content-length"] ?? 0) || 0;
    tally.requestBytes += requestBytes;
    tally.responseBytes += response.bodyBytes;
    tally.items += Number(response.headers["x-ms-item-count"] ?? 0) || 0;
    // A create or a replace answers with the document it stored.
    if (kind.startsWith("POST docs ") || kind.startsWith("PUT doc "))
      this.documents.offer(kind, requestBytes, () => sentDocument(response.body()));
  };
  /** Each create and replace kind's document ("PUT doc state") of about the mean size of its kind. */
  sampleDocuments(): Record<string, Record<string, unknown>> {
    return this.documents.typical();
  }
  reset(): void {
    this.count = 0;
    this.byKind.clear();
    this.served.clear();
    this.documents.clear();
  }
}

const isObserver = (request: IncomingMessage): boolean =>
  String(request.headers["user-agent"] ?? "").includes(OBSERVER_USER_AGENT);

/**
 * A request's method, what it addresses and its container: "GET doc state" (a point read), "PUT doc state" (a
 * replace), "POST query state" (a query), "POST docs leases" (a create), "POST plan state" (a query plan, which
 * the gateway answers and Cosmos DB does not charge as a query), ...
 */
export function requestKind(request: Pick<IncomingMessage, "method" | "url" | "headers">): string {
  const path = (request.url ?? "").split("?")[0]!.split("/").filter(Boolean);
  const colls = path.indexOf("colls");
  const container = colls >= 0 ? (path[colls + 1] ?? "?") : "-";
  const header = (name: string) => String(request.headers[name] ?? "").toLowerCase();
  const isPlan = header("x-ms-cosmos-is-query-plan-request") === "true";
  const isQuery =
    header("x-ms-documentdb-isquery") === "true" || header("content-type").includes("query+json");
  const target = isPlan ? "plan" : isQuery ? "query" : path.at(-2) === "docs" ? "doc" : (path.at(-1) ?? "?");
  return `${request.method} ${target} ${container}`;
}

/** Invocations of one function in a stretch of the app's log: how many, and their summed duration. */
export interface FunctionExecutions {
  count: number;
  totalMs: number;
}

const EXECUTED =
  /Executed 'Functions\.([^']+)' \((?:Succeeded|Failed), Id=[^,]*, Duration=(\d+(?:\.\d+)?)ms\)/g;

/** Every invocation the devhost logged in `log` (its "Executed 'Functions.<name>' (..., Duration=<n>ms)" lines). */
export function functionExecutions(log: string): Map<string, FunctionExecutions> {
  const byFunction = new Map<string, FunctionExecutions>();
  for (const [, name, ms] of log.matchAll(EXECUTED)) {
    const entry = byFunction.get(name!) ?? { count: 0, totalMs: 0 };
    entry.count++;
    entry.totalMs += Number(ms);
    byFunction.set(name!, entry);
  }
  return byFunction;
}

/**
 * BENCH_CPU_PROFILE_DIR=<dir>: the measured app's process writes a V8 CPU profile there when it stops (open it in
 * Chrome DevTools or VS Code): where an order's CPU goes. The options for its AppProcess; none when unset.
 */
export function cpuProfileOptions(): { nodeArgs?: string[] } {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return dir ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`] } : {};
}

/** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on Linux everywhere this runs. */
const USER_HZ = 100;

/**
 * CPU time a process has used so far (user + system), in ms, from /proc/<pid>/stat; undefined where there is no
 * /proc (not Linux) or the process is gone.
 */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime + stime) ? ((utime + stime) * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** CPU per order over one measured stretch: the app's process (from /proc) and the benchmark's own. */
export interface CpuPerOrder {
  /** The app's process, in ms an order; NaN where /proc cannot say. */
  app: number;
  /** The benchmark's own process (the emulators, the remote services, the load and its watcher), in ms an order. */
  bench: number;
}

/**
 * Starts measuring the CPU of the app's process `appPid` and of this one; `perOrder(orders)` at the end of the
 * stretch divides what each used by the orders. One meter for every run that reports both, so that both sides of
 * a comparison are measured over the same kind of window.
 */
export function cpuMeter(appPid: number | undefined): { perOrder(orders: number): CpuPerOrder } {
  const appBefore = processCpuMs(appPid);
  const ownBefore = process.cpuUsage();
  return {
    perOrder(orders) {
      const appAfter = processCpuMs(appPid);
      const own = process.cpuUsage(ownBefore);
      return {
        app: appBefore !== undefined && appAfter !== undefined ? (appAfter - appBefore) / orders : NaN,
        bench: (own.user + own.system) / 1000 / orders,
      };
    },
  };
}
