/**
 * Recovery latency: one order at a time, whose payment agent is silenced once (the payment service hangs until
 * the step's deadline has passed, then heals). The Supervisor must notice the expired attempt, the back-off must
 * pass, and the starter must claim the retry. Measured from the silenced step's dispatch to Processed, against
 * the bound STEP_TIMEOUT + supervisor interval + first back-off + starter interval, from the settings.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppProcess } from "../tools/appProcess";
import { FAST_TIMINGS } from "../tools/fastTimings";
import { scheduleIntervalSeconds, stepRecovery } from "../src/domain";
import { StateReader } from "../tools/soak/observe";
import { startLocalStack } from "../tools/localStack";
import { submitUntilAccepted } from "../tools/soak/submitter";
import { sampleOrder } from "../tools/sampleOrders";
import { simulatorFaults } from "../tools/simulator";
import { DIST_APP } from "./endToEnd";

export interface RecoveryFigures {
  samples: number;
  boundMs: number;
  p50RecoveryMs: number;
  maxRecoveryMs: number;
  /** maxRecoveryMs ÷ boundMs: the target is at most 1.2. */
  worstRatio: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first retry of a stuck step, via the sweep: the timing formulas' figure (src/domain/timingBudget.ts). */
export function recoveryBoundMs(settings: Record<string, string>): number {
  const recovery = stepRecovery(
    {
      stepTimeoutSeconds: Number(settings.STEP_TIMEOUT_SECONDS),
      supervisorIntervalSeconds: scheduleIntervalSeconds(settings.SUPERVISOR_SCHEDULE!),
      starterIntervalSeconds: scheduleIntervalSeconds(settings.STARTER_SCHEDULE!),
      backoffBaseSeconds: Number(settings.SUPERVISOR_BACKOFF_SECONDS),
    },
    1,
  );
  return recovery.viaSweepSeconds * 1000;
}

export async function benchRecovery({ samples }: { samples: number }): Promise<RecoveryFigures> {
  const stack = await startLocalStack();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-recovery-"));
  const reader = new StateReader(stack.cosmos);
  const faults = simulatorFaults(stack.simulator.url);
  const app = new AppProcess({ ...DIST_APP, dataDir, settings: stack.appSettings(FAST_TIMINGS) });
  try {
    await app.start();
    const target = { url: () => (app.running ? app.url : undefined) };
    const recoveries: number[] = [];
    for (let i = 0; i <= samples; i++) {
      const order = sampleOrder(i + 1, { prefix: "RECOVERY" });
      const fault = await faults.add({
        service: "payment",
        operation: "charge",
        orderId: order.orderId,
        kind: "hang",
      });
      await submitUntilAccepted(target, order);
      // Attempt 1 dispatches the charge; once its deadline has passed, only a retry can finish the order.
      let dispatchedAt: number | undefined;
      let completeBy: number | undefined;
      while (dispatchedAt === undefined || completeBy === undefined) {
        const record = (await reader.all()).find((r) => r.orderId === order.orderId);
        const charge = record?.steps[1];
        if (
          record?.attempt === 1 &&
          charge?.status === "Dispatched" &&
          charge.dispatchedAt &&
          charge.completeBy
        ) {
          dispatchedAt = Date.parse(charge.dispatchedAt);
          completeBy = Date.parse(charge.completeBy);
        } else await sleep(50);
      }
      await sleep(Math.max(0, completeBy - Date.now() + 20));
      await faults.remove(fault.id);
      for (;;) {
        const state = (await reader.states()).get(order.orderId);
        if (state === "Processed") break;
        if (state !== "Pending" && state !== "Processing") throw new Error(`${order.orderId} ended ${state}`);
        await sleep(50);
      }
      const record = (await reader.all()).find((r) => r.orderId === order.orderId)!;
      // The first sample warms the app up and is not counted.
      if (i > 0) recoveries.push(Date.parse(record.updatedAt) - dispatchedAt);
    }
    recoveries.sort((a, b) => a - b);
    const boundMs = recoveryBoundMs(FAST_TIMINGS);
    const max = recoveries[recoveries.length - 1]!;
    return {
      samples,
      boundMs,
      p50RecoveryMs: recoveries[Math.floor((recoveries.length - 1) / 2)]!,
      maxRecoveryMs: max,
      worstRatio: Number((max / boundMs).toFixed(2)),
    };
  } finally {
    await app.stop();
    reader.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
