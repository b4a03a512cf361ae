/**
 * What the end-to-end and steady-load benchmarks share: warming the app up, waiting until a set of orders has
 * reached Processed, and each order's time from its first POST to Processed, read from the state records.
 */
import type { Order } from "../src/domain/order";
import { sampleOrders } from "../tools/sampleOrders";
import type { StateReader } from "../tools/soak/observe";
import { submitAll, type Acceptance, type SubmitTarget } from "../tools/soak/submitter";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * With a `through` count, how often the store is asked all the same: the count is a hint, and a lost status would
 * stall it. Asking costs the run itself (each ask reads every record), and a run's figures come from the records'
 * times, not from when the wait ends: so rarely.
 */
const UNHINTED_CHECK_MS = 30_000;

/**
 * Resolves once every one of `orderIds` is Processed. The check is a query of the whole state container, which the
 * Cosmos DB stand-in answers on the cores the app runs on (a thousand-order run's takes tens of milliseconds of
 * them). With `through`, a count the benchmark keeps for free (the status messages sent, as the order shape's
 * benchmark counts them), the store is first asked when that count says the orders may all be through, and
 * otherwise only every UNHINTED_CHECK_MS, so that watching the run slows it down no more than watching the shape's.
 */
export async function waitAllProcessed(
  reader: StateReader,
  orderIds: readonly string[],
  options: { through?: () => boolean } = {},
): Promise<void> {
  const hinted = async () => {
    const since = Date.now();
    while (options.through && !options.through() && Date.now() - since < UNHINTED_CHECK_MS) await sleep(50);
  };
  for (;;) {
    await hinted();
    const states = await reader.states();
    if (orderIds.every((id) => states.get(id) === "Processed")) return;
    await sleep(200);
  }
}

/** Links attached, modules loaded and JIT warm before anything is counted: 20 orders through, then a second. */
export async function warmUp(target: SubmitTarget, reader: StateReader, prefix: string): Promise<void> {
  const warmup: Order[] = sampleOrders(20, { prefix });
  await submitAll(target, warmup, { concurrency: 8 });
  await waitAllProcessed(
    reader,
    warmup.map((o) => o.orderId),
  );
  await sleep(1_000);
}

/** Each accepted order's milliseconds from its first POST to Processed (its record's last update), sorted. */
export async function submitToProcessedMs(
  reader: StateReader,
  accepted: readonly Acceptance[],
): Promise<{ sorted: number[]; lastProcessedAt: number }> {
  const records = new Map((await reader.all()).map((r) => [r.orderId, r]));
  const processedAt = (orderId: string) => {
    const record = records.get(orderId);
    if (!record) throw new Error(`${orderId} was accepted but has no state record`);
    return Date.parse(record.updatedAt);
  };
  return {
    sorted: accepted.map((a) => processedAt(a.orderId) - a.submittedAt).sort((x, y) => x - y),
    lastProcessedAt: Math.max(...accepted.map((a) => processedAt(a.orderId))),
  };
}

/** The p-th percentile of sorted figures (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
