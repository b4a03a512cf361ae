import { describe, expect, it } from "vitest";
import { cpuMeter } from "../../../bench/instrument";

/** Keeps this process busy until it has used `ms` more of CPU, however long a busy machine takes to give it. */
function burnCpu(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  for (;;) {
    for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + i);
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) break;
  }
  if (x < 0) throw new Error("unreachable");
}

describe("cpuMeter", () => {
  it.runIf(process.platform === "linux")(
    "divides the CPU the app's process and this one used by the orders",
    () => {
      // This process stands for the app too: /proc sees its CPU as it would see a child's.
      const meter = cpuMeter(process.pid);
      burnCpu(200);
      const perOrder = meter.perOrder(2);
      // 100 ms an order, and a little more from the process's other threads (the collector's); /proc counts in
      // ticks of 10 ms.
      expect(perOrder.bench).toBeGreaterThanOrEqual(100);
      expect(perOrder.bench).toBeLessThan(130);
      expect(perOrder.app).toBeGreaterThanOrEqual(90);
      expect(perOrder.app).toBeLessThan(140);
    },
  );

  it("says NaN for the app when there is no process to read", () => {
    const perOrder = cpuMeter(undefined).perOrder(10);
    expect(perOrder.app).toBeNaN();
    expect(perOrder.bench).toBeGreaterThanOrEqual(0);
  });
});
