/**
 * The shipped Azure settings at Azure's speed: the tuning defaults of infra/main.bicep (60 s steps, 15 s sweeps,
 * 10 s back-offs) and host.json's queue polling, on the devhost's azure-storage latency profile, which delays each
 * Service Bus delivery and durable queue hop as Azure does and makes each function group's first invocation a
 * cold start. A fixed seed replays the same delays. Nothing may time out: every order is Processed on its first
 * attempt, with each side effect once. The run takes real time (tens of seconds): no step waits for a deadline.
 */
import { expect } from "vitest";
import { e2eOrder } from "../support/e2eOrders";
import { azureTuningDefaults } from "../support/azureDefaults";
import { e2eTest } from "../support/fixtures";

const ORDERS = 5;
const it = e2eTest({
  ...azureTuningDefaults(),
  DEVHOST_LATENCY_PROFILE: "azure-storage",
  DEVHOST_LATENCY_SEED: "20261201",
});

it("every order is Processed on its first attempt, with cold starts and queue polling on the way", async ({
  e2e,
  alerts,
}) => {
  const started = Date.now();
  const orders = Array.from({ length: ORDERS }, (_, i) => e2eOrder(`AZ-SPEED-${i}`));
  for (const order of orders) expect((await e2e.submit(order)).status).toBe(202);

  const records = await Promise.all(orders.map((o) => e2e.waitForState(o.orderId, ["Processed"], 150_000)));
  for (const record of records) {
    expect(record, record.orderId).toMatchObject({ attempt: 1, failureCount: 0 });
    expect(
      record.history.map((h) => h.event),
      record.orderId,
    ).not.toContain("expired");
  }
  for (const order of orders) {
    const ledger = await e2e.ledger(order.orderId);
    expect(
      ledger.map((e) => e.requests),
      order.orderId,
    ).toEqual([1, 1, 1]);
  }
  // How much of its deadline the slowest step used, and the slowest order end to end: the margin the shipped
  // STEP_TIMEOUT_SECONDS leaves at this speed (printed for docs/benchmarks.md).
  const stepSeconds = records.flatMap((r) =>
    r.steps.map((st) => (Date.parse(st.completedAt!) - Date.parse(st.dispatchedAt!)) / 1000),
  );
  const orderSeconds = records.map((r) => (Date.parse(r.updatedAt) - Date.parse(r.createdAt)) / 1000);
  const stepTimeout = Number(azureTuningDefaults().STEP_TIMEOUT_SECONDS);
  console.log(
    `azure-storage profile, shipped Azure settings: ${ORDERS} orders in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
      `slowest step ${Math.max(...stepSeconds).toFixed(1)} s of STEP_TIMEOUT_SECONDS=${stepTimeout}, ` +
      `slowest order ${Math.max(...orderSeconds).toFixed(1)} s`,
  );
  expect(Math.max(...stepSeconds)).toBeLessThan(stepTimeout);
  // The profile was on: the devhost logged it, and the run took the time its delays add.
  expect(e2e.logs.some((r) => /latency profile azure-storage/i.test(r.message))).toBe(true);
  expect(Date.now() - started).toBeGreaterThan(1_000);
  expect(await alerts.all()).toEqual([]);
}, 180_000);
