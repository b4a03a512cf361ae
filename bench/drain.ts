/**
 * Draining a backlog: N orders already waiting in Pending (written to the stores as the submission function
 * writes them) when the app starts with the shipped settings, starter every 5 s included. With work-conserving
 * admission each finished order hands its place to the next one at once, so the backlog should drain about as
 * fast as orders flow end to end; without it, at most MAX_IN_FLIGHT orders per starter interval.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDependencies } from "../src/app/dependencies";
import { loadConfig } from "../src/config";
import { orderWorkflowV1, submit } from "../src/domain";
import { AppProcess } from "../tools/appProcess";
import { startLocalStack } from "../tools/localStack";
import { sampleOrders } from "../tools/sampleOrders";
import { StateReader } from "../tools/soak/observe";
import { DIST_APP } from "./endToEnd";
import { OBSERVER_USER_AGENT } from "./instrument";

export interface DrainFigures {
  orders: number;
  /** Orders ÷ (last Processed − app ready). */
  drainOrdersPerSec: number;
  /** MAX_IN_FLIGHT ÷ starter interval: the most a starter that claims only on its tick could drain. */
  tickOnlyCapOrdersPerSec: number;
}

const INSERT_CONCURRENCY = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function benchDrain({ orders }: { orders: number }): Promise<DrainFigures> {
  const stack = await startLocalStack();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-drain-"));
  const settings = stack.appSettings({});
  const deps = createDependencies(loadConfig(settings));
  const reader = new StateReader(stack.cosmos, { userAgentSuffix: OBSERVER_USER_AGENT });
  const app = new AppProcess({ ...DIST_APP, dataDir, settings });
  try {
    // The backlog, as the submission function leaves it: the order document and a Pending state record each.
    const backlog = sampleOrders(orders, { prefix: "DRAIN" });
    let next = 0;
    const now = new Date();
    await Promise.all(
      Array.from({ length: INSERT_CONCURRENCY }, async () => {
        while (next < backlog.length) {
          const order = backlog[next++]!;
          await deps.orders.ensure(order, now);
          await deps.states.create(submit(order, { now, workflow: orderWorkflowV1 }));
        }
      }),
    );
    await app.start();
    const ready = Date.now();
    const ids = backlog.map((o) => o.orderId);
    for (;;) {
      const states = await reader.states();
      if (ids.every((id) => states.get(id) === "Processed")) break;
      await sleep(200);
    }
    const last = Math.max(...(await reader.all()).map((r) => Date.parse(r.updatedAt)));
    const starterSeconds = Number(/^\*\/(\d+) /.exec(String(settings.STARTER_SCHEDULE))?.[1] ?? NaN);
    return {
      orders,
      drainOrdersPerSec: Number(((orders * 1000) / (last - ready)).toFixed(1)),
      tickOnlyCapOrdersPerSec: Number((Number(settings.MAX_IN_FLIGHT) / starterSeconds).toFixed(1)),
    };
  } finally {
    await app.stop();
    reader.close();
    await deps.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
