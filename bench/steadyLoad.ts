/**
 * Steady load: orders arriving at a fixed rate, half the capacity the end-to-end burst measured, for a minute;
 * the time from submission to Processed at that rate. The burst's latencies are mostly queueing (a thousand
 * orders posted at once wait for their places); these are what an order takes when the app keeps up, which is
 * what a submitter sees on an ordinary day. Same app, settings and stack as the end-to-end run.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppProcess } from "../tools/appProcess";
import { startLocalStack } from "../tools/localStack";
import { sampleOrders } from "../tools/sampleOrders";
import { StateReader } from "../tools/soak/observe";
import { submitAll } from "../tools/soak/submitter";
import { DIST_APP, THROUGHPUT_SETTINGS } from "./endToEnd";
import { OBSERVER_USER_AGENT } from "./instrument";
import { percentile, submitToProcessedMs, waitAllProcessed, warmUp } from "./ordersThrough";

/** The share of the measured capacity the orders arrive at. */
export const STEADY_LOAD_SHARE = 0.5;

export interface SteadyLoadOptions {
  /** The end-to-end run's orders/s: the orders arrive at STEADY_LOAD_SHARE of it. */
  capacityOrdersPerSec: number;
  /** How long orders keep arriving. */
  seconds: number;
}

export interface SteadyLoadFigures {
  arrivalOrdersPerSec: number;
  seconds: number;
  orders: number;
  p50SubmitToProcessedMs: number;
  p99SubmitToProcessedMs: number;
  maxSubmitToProcessedMs: number;
}

export async function benchSteadyLoad(options: SteadyLoadOptions): Promise<SteadyLoadFigures> {
  const rate = Math.max(1, Math.round(options.capacityOrdersPerSec * STEADY_LOAD_SHARE * 10) / 10);
  const stack = await startLocalStack();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-steady-"));
  const reader = new StateReader(stack.cosmos, { userAgentSuffix: OBSERVER_USER_AGENT });
  const app = new AppProcess({ ...DIST_APP, dataDir, settings: stack.appSettings(THROUGHPUT_SETTINGS) });
  try {
    await app.start();
    const target = { url: () => (app.running ? app.url : undefined) };
    await warmUp(target, reader, "STEADY-WARM");
    const orders = sampleOrders(Math.round(rate * options.seconds), { prefix: "STEADY" });
    // Enough submitters that none waits for another: each POST takes milliseconds, arrivals are 1/rate apart.
    const accepted = await submitAll(target, orders, { concurrency: 16, perSecond: rate });
    await waitAllProcessed(
      reader,
      orders.map((o) => o.orderId),
    );
    const { sorted } = await submitToProcessedMs(reader, accepted);
    return {
      arrivalOrdersPerSec: rate,
      seconds: options.seconds,
      orders: orders.length,
      p50SubmitToProcessedMs: Math.round(percentile(sorted, 50)),
      p99SubmitToProcessedMs: Math.round(percentile(sorted, 99)),
      maxSubmitToProcessedMs: Math.round(sorted.at(-1) ?? NaN),
    };
  } finally {
    await app.stop();
    reader.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
