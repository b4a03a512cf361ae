/**
 * Counters on the emulators of this process, for "requests per order" figures: every HTTP request the Cosmos DB
 * stand-in serves (through its onRequest hook), and every message the Service Bus emulator's queues accept,
 * drop as duplicates or hand to a receiver (by wrapping MessageQueue's send and receive). The counting is
 * benchmark instrumentation only; the emulators behave exactly as without it.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { MessageQueue } from "devhost/emulators";

export interface BusCounts {
  /** Messages enqueued (duplicates excluded; dead-letter moves are not sends). */
  sent: number;
  /** Sends that duplicate detection dropped. */
  duplicates: number;
  /** Messages handed to a receiver (peek-lock or receive-and-delete). */
  deliveries: number;
}

const bus: BusCounts = { sent: 0, duplicates: 0, deliveries: 0 };
let installed = false;

/** Wraps MessageQueue.prototype.send/receive once per process; the counters start at zero on reset. */
export function countServiceBus(): { counts(): BusCounts; reset(): void } {
  if (!installed) {
    const proto = MessageQueue.prototype;
    if (typeof proto.send !== "function" || typeof proto.receive !== "function")
      throw new Error("MessageQueue has no send/receive to count: update bench/instrument.ts");
    const send = proto.send;
    const receive = proto.receive;
    proto.send = function (this: MessageQueue, ...args: Parameters<typeof send>) {
      const stored = send.apply(this, args);
      if (stored) bus.sent++;
      else bus.duplicates++;
      return stored;
    };
    proto.receive = function (this: MessageQueue, ...args: Parameters<typeof receive>) {
      const stored = receive.apply(this, args);
      if (stored) bus.deliveries++;
      return stored;
    };
    installed = true;
  }
  return {
    counts: () => ({ ...bus }),
    reset: () => Object.assign(bus, { sent: 0, duplicates: 0, deliveries: 0 }),
  };
}

/** User-agent suffix of the benchmark's own Cosmos DB client, whose requests are not the app's. */
export const OBSERVER_USER_AGENT = "bench-observer";

/** Counts the app's requests to the Cosmos DB stand-in (the benchmark's own are told apart by user agent). */
export class StoreRequestCounter {
  count = 0;
  /** The same requests by kind ("POST docs state", "GET docs leases", ...), to see where an order's requests go. */
  readonly byKind = new Map<string, number>();
  readonly onRequest = (request: IncomingMessage): void => {
    if (String(request.headers["user-agent"] ?? "").includes(OBSERVER_USER_AGENT)) return;
    this.count++;
    const kind = requestKind(request);
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
  };
}

/**
 * A request's method, what it addresses and its container: "GET doc state" (a point read), "PUT doc state" (a
 * replace), "POST query state" (a query), "POST docs leases" (a create), ...
 */
function requestKind(request: IncomingMessage): string {
  const path = (request.url ?? "").split("?")[0]!.split("/").filter(Boolean);
  const colls = path.indexOf("colls");
  const container = colls >= 0 ? (path[colls + 1] ?? "?") : "-";
  const isQuery =
    String(request.headers["x-ms-documentdb-isquery"] ?? "") === "true" ||
    String(request.headers["content-type"] ?? "").includes("query+json");
  const target = isQuery ? "query" : path.at(-2) === "docs" ? "doc" : (path.at(-1) ?? "?");
  return `${request.method} ${target} ${container}`;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on Linux everywhere this runs. */
const USER_HZ = 100;

/**
 * CPU time a process has used so far (user + system), in ms, from /proc/<pid>/stat; undefined where there is no
 * /proc (not Linux) or the process is gone.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
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
