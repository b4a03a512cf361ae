/**
 * The benchmarks' targets (docs/benchmarks.md, "Targets"): each threshold written once, and the rows `npm run bench`
 * prints and keeps in bench/results.json, from the figures of the run and those kept of the benchmarks it skipped.
 */
import type { CostEntry } from "./costReport";

export type Figures = Record<string, number>;
export type Results = Record<string, Figures>;

/** A row of the targets table: `met` undefined for a figure reported beside the targets, held to none yet. */
export interface TargetRow {
  target: string;
  figure: string;
  met: boolean | undefined;
}

/** Thresholds of the targets (docs/benchmarks.md, "Targets"), each written once. */
export const TARGETS = {
  usdPerMillionOrders: 40,
  throughputOfShape: 0.8,
  storeRequestsPerOrder: 12,
  recoveryOfBound: 1.2,
  drainOfEndToEnd: 0.8,
} as const;

/** How the shipped Cosmos DB mode was priced; entries kept from before the mode was recorded say nothing. */
const modeNote = (mode: CostEntry["shippedCosmosCapacityMode"] | undefined): string =>
  mode === "Provisioned"
    ? " (Cosmos DB autoscale, busy all hour)"
    : mode === "Serverless"
      ? " (Cosmos DB serverless)"
      : "";

/**
 * The benchmarks' targets (docs/benchmarks.md), checked against this run's figures (or the kept ones of a benchmark
 * that did not run): met or not, with the figures they compare. The steady load's latencies and what an order's
 * traces would cost in Application Insights are reported beside them, held to no target.
 */
export function targets(results: Results, cost: CostEntry | undefined): TargetRow[] {
  const rows: TargetRow[] = [];
  const e2e = results.endToEnd;
  if (cost) {
    const usd = cost.usdPerMillionOrders.shippedDefaults;
    rows.push({
      target: `cost ≤ $${TARGETS.usdPerMillionOrders} per million orders (shipped defaults, list prices)`,
      figure: `$${usd.toFixed(2)}${modeNote(cost.shippedCosmosCapacityMode)}`,
      met: usd <= TARGETS.usdPerMillionOrders,
    });
  }
  // Outside the cost's rules: what Application Insights would ingest of an order at the shipped sampling ratio.
  const telemetry = results.telemetry;
  if (telemetry?.usdPerMillionOrders !== undefined)
    rows.push({
      target:
        "traces ingested by Application Insights, TRACE_SAMPLING_RATIO=1 (reported, not in the cost's rules)",
      figure: `${telemetry.envelopesPerOrder} envelopes, ${(telemetry.bytesPerOrder ?? 0).toLocaleString("en-US")} B per order: $${telemetry.usdPerMillionOrders.toFixed(2)} per million orders`,
      met: undefined,
    });
  // What an app making exactly the order's hops with no code of its own does, measured in the same run.
  // When the run measured several pairs (the app, then the shape), their median: one pair moves with the machine.
  const shape = results.orderShape;
  if (e2e?.ordersPerSec !== undefined && shape?.ordersPerSec !== undefined) {
    const ratio = e2e.ordersPerSec / shape.ordersPerSec;
    const pairs = shape.pairs ?? 1;
    const median = pairs > 1 ? shape.medianRatio : undefined;
    const all = Array.from({ length: pairs }, (_, i) => shape[`pair${i + 1}.ratio`]);
    // Two decimals, rounded down: a ratio just under the target never reads as meeting it.
    const shown = (r: number | undefined) => (r === undefined ? "?" : (Math.floor(r * 100) / 100).toFixed(2));
    // The first pair as measured; a run that kept endToEnd from an earlier run (`--only orderShape`) paired anew.
    const firstApp = shape["pair1.appOrdersPerSec"] ?? e2e.ordersPerSec;
    const firstShape = shape["pair1.shapeOrdersPerSec"] ?? shape.ordersPerSec;
    rows.push({
      target: `app throughput ≥ ${TARGETS.throughputOfShape} × the order shape's`,
      figure:
        median !== undefined
          ? `median ${shown(median)} of ${pairs} pairs (${all.map(shown).join(", ")}); ` +
            `the first: ${firstApp} orders/s = ${shown(firstApp / firstShape)} × ${firstShape}`
          : `${e2e.ordersPerSec} orders/s = ${shown(ratio)} × ${shape.ordersPerSec}`,
      met: (median ?? ratio) >= TARGETS.throughputOfShape,
    });
  }
  if (e2e?.storeRequestsPerOrder !== undefined)
    rows.push({
      target: `store requests per order ≤ ${TARGETS.storeRequestsPerOrder}`,
      figure: String(e2e.storeRequestsPerOrder),
      met: e2e.storeRequestsPerOrder <= TARGETS.storeRequestsPerOrder,
    });
  const steady = results.steadyLoad;
  if (steady?.p50SubmitToProcessedMs !== undefined)
    rows.push({
      target: "steady load at half the capacity: submission to Processed (reported, no target yet)",
      figure:
        `p50 ${steady.p50SubmitToProcessedMs} ms, p99 ${steady.p99SubmitToProcessedMs} ms at ${steady.arrivalOrdersPerSec} orders/s` +
        (e2e?.p50SubmitToProcessedMs !== undefined
          ? `; the burst's: p50 ${e2e.p50SubmitToProcessedMs} ms, p99 ${e2e.p99SubmitToProcessedMs} ms`
          : ""),
      met: undefined,
    });
  const recovery = results.recovery;
  if (recovery?.worstRatio !== undefined)
    rows.push({
      target: `recovery ≤ ${TARGETS.recoveryOfBound} × bound`,
      figure: `worst ${recovery.maxRecoveryMs} ms = ${recovery.worstRatio} × ${recovery.boundMs} ms`,
      met: recovery.worstRatio <= TARGETS.recoveryOfBound,
    });
  const drain = results.drain;
  if (drain?.drainOrdersPerSec !== undefined && e2e?.ordersPerSec !== undefined)
    rows.push({
      target: `backlog drain ≥ ${TARGETS.drainOfEndToEnd} × end-to-end rate`,
      figure: `${drain.drainOrdersPerSec} orders/s = ${(drain.drainOrdersPerSec / e2e.ordersPerSec).toFixed(2)} × ${e2e.ordersPerSec} (tick-only cap ${drain.tickOnlyCapOrdersPerSec})`,
      met: drain.drainOrdersPerSec >= TARGETS.drainOfEndToEnd * e2e.ordersPerSec,
    });
  const sweep = results.sweep;
  if (sweep) {
    /** A sweep figure that must be the same at every store size: one target row, when the run measured it. */
    const flat = (suffix: string, target: string) => {
      const values = Object.entries(sweep)
        .filter(([k]) => k.endsWith(suffix))
        .map(([, v]) => v);
      if (values.length === 0) return;
      const [min, max] = [Math.min(...values), Math.max(...values)];
      rows.push({ target, figure: `${min}..${max} across ${values.length} store sizes`, met: min === max });
    };
    flat(".recordsRead", "records read per sweep independent of the total");
    // The recovery queue's work per expired step: the same requests at every size, so recovery stays flat.
    flat(".noticeStoreRequests", "recovery-queue store requests per expired step independent of the total");
  }
  return rows;
}
