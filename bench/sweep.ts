/**
 * The Supervisor's sweep cost as the state store grows: the real sweep() (src/supervisor/sweep.ts) against the
 * Cosmos DB stand-in holding 1,000 to 50,000 records, of which a fixed number have an expired attempt. Reports
 * the records each sweep read (the expired ones the query returned), its store requests and its duration.
 * The query is bounded by state and a completeBy window, so what it reads should not grow with the store.
 */
import { InvocationContext } from "@azure/functions";
import { createDependencies } from "../src/app/dependencies";
import { loadConfig } from "../src/config";
import { orderWorkflowV1, submit, type StateRecord } from "../src/domain";
import { startLocalStack } from "../tools/localStack";
import { sampleOrder } from "../tools/sampleOrders";
import { sweep } from "../src/supervisor/sweep";
import { StoreRequestCounter } from "./instrument";

export interface SweepPoint {
  records: number;
  expired: number;
  recordsRead: number;
  storeRequests: number;
  sweepMs: number;
}

const INSERT_CONCURRENCY = 32;

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
  const points: SweepPoint[] = [];
  let next = 1;
  const insert = async (count: number, expiredRecords: boolean) => {
    const now = new Date();
    let remaining = count;
    await Promise.all(
      Array.from({ length: INSERT_CONCURRENCY }, async () => {
        while (remaining > 0) {
          remaining--;
          await deps.states.create(record(next++, now, expiredRecords));
        }
      }),
    );
  };
  try {
    // The expired records of one size are Pending after its sweep and count towards the next size.
    let total = 0;
    for (const size of sizes) {
      const filling = performance.now();
      await insert(size - total - expired, false);
      await insert(expired, true);
      total = size;
      log(`${size} records stored (${((performance.now() - filling) / 1000).toFixed(1)} s); sweeping`);
      counter.count = 0;
      const started = performance.now();
      const report = await sweep(deps, context, "bench");
      const sweepMs = performance.now() - started;
      if (!report.leader) throw new Error("the benchmark's sweep did not get the Supervisor lease");
      if (report.acted !== expired)
        throw new Error(`the sweep acted on ${report.acted} of ${expired} expired records`);
      points.push({
        records: size,
        expired,
        recordsRead: report.scanned,
        storeRequests: counter.count,
        sweepMs: Math.round(sweepMs),
      });
      log(
        `${size} records: read ${report.scanned}, ${counter.count} store requests, ${Math.round(sweepMs)} ms`,
      );
    }
    return points;
  } finally {
    await deps.close();
    await stack.stop();
  }
}
