/**
 * The Supervisor's sweep cost as the state store grows: the real sweep() (src/supervisor/sweep.ts) against the
 * Cosmos DB stand-in holding 1,000 to 50,000 records, of which a fixed number have an expired attempt. Reports
 * the records each sweep read (the expired ones the query returned), its store requests and its duration.
 * The query is bounded by state and a completeBy window, so what it reads should not grow with the store.
 * At each size it also times a point read and a conditional replace (read, then replace with IfMatch) of
 * stored records, one at a time, which should not grow with the store either. And it runs the same number of
 * expired attempts through the Supervisor's recovery queue instead (handleDeadline, one notice each, as
 * supervisorDeadline receives them): its store requests and time per expired step, which should stay flat.
 */
import { CosmosClient, type Container } from "@azure/cosmos";
import { InvocationContext } from "@azure/functions";
import { createDependencies } from "../src/app/dependencies";
import { loadConfig } from "../src/config";
import { orderWorkflowV1, submit, type StateRecord } from "../src/domain";
import { startLocalStack } from "../tools/localStack";
import { sampleOrder } from "../tools/sampleOrders";
import { handleDeadline } from "../src/supervisor/deadline";
import { sweep } from "../src/supervisor/sweep";
import { OBSERVER_USER_AGENT, StoreRequestCounter } from "./instrument";

export interface SweepPoint {
  records: number;
  expired: number;
  recordsRead: number;
  storeRequests: number;
  sweepMs: number;
  /** Mean time of one point read of a stored record. */
  pointReadMs: number;
  /** Mean time of one conditional replace of a stored record: its read, then the replace with IfMatch. */
  replaceMs: number;
  /** The recovery queue: store requests and mean time per deadline notice, one expired attempt each. */
  noticeStoreRequests: number;
  noticeMs: number;
}

const INSERT_CONCURRENCY = 32;
/** Point reads and conditional replaces timed at each size, one at a time, after a few untimed ones. */
const TIMED_OPERATIONS = 200;
const WARM_UP_OPERATIONS = 20;

/** Mean milliseconds per call of `operation` on `TIMED_OPERATIONS` records spread over `orderIds`. */
async function meanMs(orderIds: string[], operation: (orderId: string) => Promise<void>): Promise<number> {
  const at = (k: number) => orderIds[Math.floor((k * orderIds.length) / TIMED_OPERATIONS)]!;
  for (let k = 0; k < WARM_UP_OPERATIONS; k++) await operation(at(k));
  const started = performance.now();
  for (let k = 0; k < TIMED_OPERATIONS; k++) await operation(at(k));
  return Math.round(((performance.now() - started) / TIMED_OPERATIONS) * 100) / 100;
}

/** Times point reads and conditional replaces of finished records in the state container. */
async function timeItemOperations(
  state: Container,
  orderIds: string[],
): Promise<{ pointReadMs: number; replaceMs: number }> {
  const pointReadMs = await meanMs(orderIds, async (orderId) => {
    const { resource } = await state.item(orderId, orderId).read();
    if (!resource) throw new Error(`state record ${orderId} is missing`);
  });
  const replaceMs = await meanMs(orderIds, async (orderId) => {
    const item = state.item(orderId, orderId);
    const { resource, etag } = await item.read<Record<string, unknown>>();
    if (!resource) throw new Error(`state record ${orderId} is missing`);
    await item.replace(resource, { accessCondition: { type: "IfMatch", condition: etag } });
  });
  return { pointReadMs, replaceMs };
}

/** A record as a finished order leaves it, or one whose attempt expired a minute ago. */
function record(i: number, now: Date, expired: boolean): StateRecord {
  const base = submit(sampleOrder(i, { prefix: "SWEEP", replyTo: null }), { now, workflow: orderWorkflowV1 });
  if (!expired) return { ...base, processState: "Processed" };
  return {
    ...base,
    processState: "Processing",
    attempt: 1,
    lockedBy: `${base.orderId}:1`,
    completeBy: new Date(now.getTime() - 60_000).toISOString(),
  };
}

export async function benchSweep({
  sizes,
  expired,
  log = () => undefined,
}: {
  sizes: number[];
  expired: number;
  /** One line per store size, as it is measured. */
  log?: (line: string) => void;
}): Promise<SweepPoint[]> {
  const counter = new StoreRequestCounter();
  const stack = await startLocalStack({ onCosmosRequest: counter.onRequest });
  const deps = createDependencies(loadConfig(stack.appSettings({ SUPERVISOR_PAGE_SIZE: "100" })));
  const context = new InvocationContext({
    functionName: "supervisor",
    invocationId: "bench",
    logHandler: () => undefined,
  });
  // The benchmark's own client, whose requests the counter leaves out.
  const observer = new CosmosClient({
    endpoint: stack.cosmos.endpoint,
    key: stack.cosmos.key,
    connectionPolicy: { enableEndpointDiscovery: false },
    userAgentSuffix: OBSERVER_USER_AGENT,
  });
  const state = observer.database(stack.cosmos.database).container("state");
  const points: SweepPoint[] = [];
  /** The finished records, which the sweep never touches: the ones the item operations are timed on. */
  const finished: string[] = [];
  let next = 1;
  const insert = async (count: number, expiredRecords: boolean): Promise<StateRecord[]> => {
    const now = new Date();
    const stored: StateRecord[] = [];
    let remaining = count;
    await Promise.all(
      Array.from({ length: INSERT_CONCURRENCY }, async () => {
        while (remaining > 0) {
          remaining--;
          const one = record(next++, now, expiredRecords);
          await deps.states.create(one);
          stored.push(one);
          if (!expiredRecords) finished.push(one.orderId);
        }
      }),
    );
    return stored;
  };
  /** Each record's notice through the recovery queue's handler, one at a time, as one consumer takes them. */
  const notify = async (records: StateRecord[]): Promise<{ storeRequests: number; ms: number }> => {
    counter.count = 0;
    const started = performance.now();
    for (const r of records) {
      const outcome = await handleDeadline(deps, context, {
        orderId: r.orderId,
        instanceId: r.lockedBy!,
        stepIndex: 0,
        kind: "do",
        completeBy: r.completeBy!,
      });
      if (outcome.kind !== "expired") throw new Error(`notice for ${r.orderId}: ${JSON.stringify(outcome)}`);
    }
    const ms = (performance.now() - started) / records.length;
    return { storeRequests: counter.count / records.length, ms: Math.round(ms * 100) / 100 };
  };
  try {
    // The expired records of one size are Pending after its sweep (or its notices) and count towards the next size.
    let total = 0;
    for (const size of sizes) {
      const filling = performance.now();
      await insert(size - total - 2 * expired, false);
      await insert(expired, true);
      total = size - expired;
      log(`${size} records stored (${((performance.now() - filling) / 1000).toFixed(1)} s); sweeping`);
      counter.count = 0;
      const started = performance.now();
      const report = await sweep(deps, context, "bench");
      const sweepMs = performance.now() - started;
      if (!report.leader) throw new Error("the benchmark's sweep did not get the Supervisor lease");
      if (report.acted !== expired)
        throw new Error(`the sweep acted on ${report.acted} of ${expired} expired records`);
      const storeRequests = counter.count;
      // As many again, expired once the sweep is done, each decided from its notice instead.
      const notices = await notify(await insert(expired, true));
      total = size;
      const { pointReadMs, replaceMs } = await timeItemOperations(state, finished);
      points.push({
        records: size,
        expired,
        recordsRead: report.scanned,
        storeRequests,
        sweepMs: Math.round(sweepMs),
        pointReadMs,
        replaceMs,
        noticeStoreRequests: notices.storeRequests,
        noticeMs: notices.ms,
      });
      log(
        `${size} records: read ${report.scanned}, ${storeRequests} store requests, ${Math.round(sweepMs)} ms; ` +
          `recovery queue ${notices.storeRequests} store requests and ${notices.ms} ms per expired step; ` +
          `point read ${pointReadMs} ms, conditional replace ${replaceMs} ms`,
      );
    }
    return points;
  } finally {
    observer.dispose();
    await deps.close();
    await stack.stop();
  }
}
