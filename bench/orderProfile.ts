/**
 * What one order did in the end-to-end run, in the units Azure bills: store requests by operation and container
 * with the size of the documents they carried, Service Bus operations and message sizes, durable work
 * (episodes, activities, timers, events) and function executions. Pure: built from the counters of
 * instrument.ts and the task hub's tally after the run; bench/costModel.ts prices it.
 */
import type { BusCounts, FunctionExecutions, SampleMessage, ServedTally } from "./instrument";

/** How Cosmos DB charges a request: by what it does to which document, not by its HTTP shape. */
export type StoreOperation = "pointRead" | "create" | "replace" | "delete" | "query" | "metadata";

export interface StoreKindProfile {
  /** The request kind as instrument.ts names it: "PUT doc state". */
  kind: string;
  container: string;
  operation: StoreOperation;
  perOrder: number;
  /** Of those, answered with 400 or more (a create that found the document, a replace that lost its etag). */
  failedPerOrder: number;
  /**
   * Mean size of the documents it carried, in bytes: the request body of a create or replace, the response body
   * of a point read, the response body ÷ items of a query page. 0 where nothing was carried (delete, metadata).
   */
  meanDocumentBytes: number;
  /** Queries only: items returned per request. */
  itemsPerRequest: number;
}

export interface BusProfile {
  sentPerOrder: number;
  deliveriesPerOrder: number;
  completesPerOrder: number;
  otherSettlementsPerOrder: number;
  lockRenewalsPerOrder: number;
  duplicatesPerOrder: number;
  meanMessageBytes: number;
  largestMessageBytes: number;
  sentByQueuePerOrder: Record<string, number>;
}

export interface DurableProfile {
  /** Orchestration instances (one per attempt). */
  instancesPerOrder: number;
  /** Orchestrator episodes: each replays the history so far (OrchestratorStarted events). */
  episodesPerOrder: number;
  activitiesPerOrder: number;
  timersCreatedPerOrder: number;
  timersFiredPerOrder: number;
  timersCancelledPerOrder: number;
  eventsRaisedPerOrder: number;
}

export interface FunctionsProfile {
  executionsPerOrder: number;
  /** Summed execution durations, as the devhost logged them. */
  executionMsPerOrder: number;
  executionsByFunctionPerOrder: Record<string, number>;
  /** CPU time of the app's process per order (user + system): the time an instance is busy. */
  appCpuMsPerOrder: number;
}

/**
 * Real payloads of the measured orders, each of about the mean size of its kind: what the order shape carries
 * (bench/orderShape.ts), so that its hops cost what the order's cost to encode, send, parse and store.
 */
export interface OrderPayloads {
  /** A document each create and replace kind wrote ("PUT doc state"), as its writer sent it. */
  documents: Record<string, Record<string, unknown>>;
  /** A message sent to each queue, with the properties its sender set. */
  messages: Record<string, SampleMessage>;
}

export interface OrderProfile {
  orders: number;
  store: StoreKindProfile[];
  bus: BusProfile;
  durable: DurableProfile;
  functions: FunctionsProfile;
  /** Absent in a profile kept from before the payloads were sampled. */
  payloads?: OrderPayloads;
}

/** The operation a request kind ("METHOD target container", instrument.ts requestKind) stands for. */
export function operationOf(kind: string): StoreOperation {
  const [method, target] = kind.split(" ");
  if (target === "query" || (method === "GET" && target === "docs")) return "query";
  if (target === "doc" && method === "GET") return "pointRead";
  if (target === "doc" && method === "PUT") return "replace";
  if (target === "doc" && method === "DELETE") return "delete";
  if (target === "docs" && method === "POST") return "create";
  return "metadata";
}

const round = (n: number, digits: number) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : 0);
const perOrder = (n: number, orders: number) => round(n / orders, 3);

export function storeProfile(
  byKind: ReadonlyMap<string, number>,
  served: ReadonlyMap<string, ServedTally>,
  orders: number,
): StoreKindProfile[] {
  return [...byKind]
    .map(([kind, count]) => {
      const operation = operationOf(kind);
      const tally = served.get(kind) ?? {
        responses: 0,
        failed: 0,
        requestBytes: 0,
        responseBytes: 0,
        items: 0,
      };
      const ok = tally.responses - tally.failed;
      const meanDocumentBytes =
        operation === "create" || operation === "replace"
          ? tally.requestBytes / ok
          : operation === "pointRead"
            ? tally.responseBytes / ok
            : operation === "query"
              ? tally.responseBytes / tally.items
              : 0;
      return {
        kind,
        container: kind.split(" ")[2] ?? "-",
        operation,
        perOrder: perOrder(count, orders),
        failedPerOrder: perOrder(tally.failed, orders),
        meanDocumentBytes: Math.round(Number.isFinite(meanDocumentBytes) ? meanDocumentBytes : 0),
        itemsPerRequest: operation === "query" ? round(tally.items / ok, 2) : 0,
      };
    })
    .sort((a, b) => b.perOrder - a.perOrder || a.kind.localeCompare(b.kind));
}

export function busProfile(counts: BusCounts, orders: number): BusProfile {
  return {
    sentPerOrder: perOrder(counts.sent, orders),
    deliveriesPerOrder: perOrder(counts.deliveries, orders),
    completesPerOrder: perOrder(counts.completes, orders),
    otherSettlementsPerOrder: perOrder(counts.otherSettlements, orders),
    lockRenewalsPerOrder: perOrder(counts.lockRenewals, orders),
    duplicatesPerOrder: perOrder(counts.duplicates, orders),
    meanMessageBytes: Math.round(counts.sent ? counts.sentBytes / counts.sent : 0),
    largestMessageBytes: counts.largestMessageBytes,
    sentByQueuePerOrder: Object.fromEntries(
      Object.entries(counts.sentByQueue)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([queue, n]) => [queue, perOrder(n, orders)]),
    ),
  };
}

/** What durable work the orchestrations of the given orders did: instance ids are `${orderId}:${attempt}`. */
export function durableProfile(
  tallies: ReadonlyArray<{ instanceId: string; events: Record<string, number>; cancelledTimers: number }>,
  orderIds: ReadonlySet<string>,
): DurableProfile {
  const mine = tallies.filter((t) => orderIds.has(t.instanceId.slice(0, t.instanceId.lastIndexOf(":"))));
  const sum = (f: (t: (typeof mine)[number]) => number) => mine.reduce((total, t) => total + f(t), 0);
  const events = (name: string) => sum((t) => t.events[name] ?? 0);
  const orders = orderIds.size;
  return {
    instancesPerOrder: perOrder(mine.length, orders),
    episodesPerOrder: perOrder(events("OrchestratorStarted"), orders),
    activitiesPerOrder: perOrder(events("TaskScheduled"), orders),
    timersCreatedPerOrder: perOrder(events("TimerCreated"), orders),
    timersFiredPerOrder: perOrder(events("TimerFired"), orders),
    timersCancelledPerOrder: perOrder(
      sum((t) => t.cancelledTimers),
      orders,
    ),
    eventsRaisedPerOrder: perOrder(events("EventRaised"), orders),
  };
}

export function functionsProfile(
  executions: ReadonlyMap<string, FunctionExecutions>,
  orders: number,
  appCpuMsPerOrder: number,
): FunctionsProfile {
  const all = [...executions.values()];
  return {
    executionsPerOrder: perOrder(
      all.reduce((n, e) => n + e.count, 0),
      orders,
    ),
    executionMsPerOrder: round(all.reduce((n, e) => n + e.totalMs, 0) / orders, 1),
    executionsByFunctionPerOrder: Object.fromEntries(
      [...executions]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, e]) => [name, perOrder(e.count, orders)]),
    ),
    appCpuMsPerOrder: round(appCpuMsPerOrder, 1),
  };
}
