/**
 * Failure catalogue: a new workflow version is deployed while an order of the old one is in flight. The app runs
 * in a child process: first the plain build (order v1 only), then, on the same data directory, a build that
 * registers order v2 at start-up (test/support/apps/order-app-v2: v1 plus a reservePackaging step).
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { e2eOrder } from "../support/e2eOrders";
import { orderAppVariant, submitTo } from "../support/e2eChild";
import { faultOn, processedLedger, stepIndex, type DeclaredSteps } from "../support/expectedProcess";
import { childStackTest as it } from "../support/fixtures";

const V1_STEPS = orderWorkflowV1.steps.map((s) => s.name);
/** The step the order is held at when v2 is deployed: the payment, whose charge hangs. */
const CHARGE = stepIndex("chargePayment");
/** v2 as order-app-v2 declares it (what this test needs of it): v1 with reservePackaging right after the charge. */
const reservePackaging = {
  name: "reservePackaging",
  agent: "inventory",
  doOperation: "reserve",
  undoOperation: "release",
} as const;
const orderV2: DeclaredSteps = {
  name: orderWorkflowV1.name,
  version: 2,
  steps: [
    ...orderWorkflowV1.steps.slice(0, CHARGE + 1),
    reservePackaging,
    ...orderWorkflowV1.steps.slice(CHARGE + 1),
  ],
};
const V2_STEPS = orderV2.steps.map((s) => s.name);

it("finishes a v1 order on v1 after v2 is deployed, and starts new orders on v2", async ({ stack }) => {
  const v1App = await stack.startApp();
  const inFlight = e2eOrder("VER-1");
  // The charge hangs, so the order is mid-step (chargePayment dispatched) when the new build is deployed.
  await stack.faults.add({
    ...faultOn(CHARGE),
    orderId: inFlight.orderId,
    kind: "hang",
  });
  expect((await submitTo(v1App, inFlight)).status).toBe(202);
  await stack.waitForRecord(
    inFlight.orderId,
    (r) => r.steps[CHARGE]?.status === "Dispatched",
    "chargePayment dispatched",
  );

  // Deploy: stop the v1 build cleanly and start the v2 build on the same task hub.
  expect(await v1App.stop()).toBe(0);
  const atDeploy = await stack.state(inFlight.orderId);
  expect(atDeploy).toMatchObject({ processState: "Processing", workflow: { name: "order", version: 1 } });
  expect(atDeploy?.steps.map((s) => [s.name, s.status])).toEqual(
    V1_STEPS.map((n, i) => [n, i < CHARGE ? "Succeeded" : i === CHARGE ? "Dispatched" : "Pending"]),
  );
  const v2App = await stack.startApp({ dataDir: v1App.dataDir, appEntry: orderAppVariant("order-app-v2") });

  const fresh = e2eOrder("VER-2");
  expect((await submitTo(v2App, fresh)).status).toBe(202);
  await stack.faults.clear();
  const [oldRecord, newRecord] = await Promise.all([
    stack.waitForState(inFlight.orderId, ["Processed"], 60_000),
    stack.waitForState(fresh.orderId, ["Processed"], 60_000),
  ]);

  // The v1 order finished under the v2 build, on v1. Two paths are both correct, depending on timing: the
  // attempt-1 orchestration resumed in the new build (its task hub survived the deploy) and got the charge's
  // reply before its deadline, or that attempt expired and the Supervisor's retry ran the steps the record
  // started with. Either way only v1's steps ran.
  expect(oldRecord.workflow).toEqual({ name: "order", version: 1 });
  expect(oldRecord.steps.map((s) => [s.name, s.status])).toEqual(V1_STEPS.map((n) => [n, "Succeeded"]));
  if (oldRecord.attempt > 1) {
    expect(oldRecord.history).toContainEqual(expect.objectContaining({ event: "expired", attempt: 1 }));
  } else {
    expect(oldRecord.history.map((h) => h.event)).not.toContain("expired");
  }
  const oldLedger = await stack.ledger(inFlight.orderId);
  expect(oldLedger.map((e) => e.idempotencyKey)).toEqual(V1_STEPS.map((n) => `${inFlight.orderId}:${n}:do`));
  expect(oldLedger.every((e) => e.applied)).toBe(true);

  // The new order ran v2, the extra step included, each step once and in order.
  expect(newRecord).toMatchObject({ workflow: { name: "order", version: 2 }, attempt: 1, failureCount: 0 });
  expect(newRecord.steps.map((s) => [s.name, s.status])).toEqual(V2_STEPS.map((n) => [n, "Succeeded"]));
  const newLedger = await stack.ledger(fresh.orderId);
  expect(
    newLedger.map((e) => ({ label: `${e.service}.${e.operation}`, idempotencyKey: e.idempotencyKey })),
  ).toEqual(processedLedger(fresh.orderId, orderV2));
  expect(newLedger.every((e) => e.applied && e.requests === 1)).toBe(true);
  const box = await fetch(`${stack.emulators.simulatorUrl}/inventory/stock/BOX-STANDARD`);
  expect(await box.json()).toEqual({ sku: "BOX-STANDARD", available: 999 });

  // No UnknownWorkflow (or any other) alert.
  expect(await stack.drain("alerts")).toEqual([]);
}, 120_000);
