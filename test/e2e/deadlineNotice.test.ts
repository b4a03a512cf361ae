/**
 * The Supervisor's recovery queue end to end: with the periodic sweep as good as off (once a year), a step whose
 * agent stays silent is still decided at its deadline, from the notice its orchestration sends when the durable
 * timer wins, and an agent's transient failure from the notice the activity that records it sends. The sweep is
 * only the safety net for attempts whose orchestration never reached its deadline.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { e2eOrder } from "../support/e2eOrders";
import { sendToQueue, waitForRejected } from "../support/e2eQueues";
import { faultOn, stepIndex } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { waitUntilPast } from "../support/wait";

const it = e2eTest({ SUPERVISOR_SCHEDULE: "0 0 0 1 1 *" });

/** The step whose service stays silent for one order: the charge. */
const CHARGE = stepIndex("chargePayment");

it("recovers a silent step and a transient failure without a sweep, each decided by the Supervisor once", async ({
  e2e,
  alerts,
}) => {
  const silent = e2eOrder("NOTICE-SILENT");
  const transient = e2eOrder("NOTICE-TRANSIENT");
  const hang = await e2e.faults.add({
    ...faultOn(CHARGE),
    orderId: silent.orderId,
    kind: "hang",
  });
  // Three failed calls of its last step: the agent's retries inside attempt 1 run out, and it replies transient.
  await e2e.faults.add({
    ...faultOn(orderWorkflowV1.steps.length - 1),
    orderId: transient.orderId,
    kind: "transient",
    count: 3,
  });
  expect((await e2e.submit(silent)).status).toBe(202);
  expect((await e2e.submit(transient)).status).toBe(202);

  const dispatched = await e2e.waitForRecord(
    silent.orderId,
    (r) => r.attempt === 1 && r.steps[CHARGE]!.status === "Dispatched",
    "the charge dispatched on attempt 1",
  );
  await waitUntilPast(dispatched.steps[CHARGE]!.completeBy!);
  await e2e.faults.remove(hang.id);

  for (const order of [silent, transient]) {
    const id = order.orderId;
    const record = await e2e.waitForState(id, ["Processed"]);
    expect(record, id).toMatchObject({ attempt: 2, failureCount: 1 });
    const expired = record.history.filter((h) => h.event === "expired");
    expect(expired, id).toEqual([expect.objectContaining({ by: "supervisor", attempt: 1, to: "Pending" })]);
    // Decided from the recovery queue: the sweep never ran.
    expect(
      e2e.logs.some((l) => l.message.startsWith(`supervisor: ${id}:1 step `)),
      `${id}: the Supervisor's decision from its recovery queue`,
    ).toBe(true);
  }
  expect(e2e.logs.some((l) => l.message.startsWith("supervisor sweep:"))).toBe(false);
  expect(await alerts.all()).toEqual([]);
}, 60_000);

it("refuses a notice that is not this app's: set aside with its reason, one InvalidMessage alert, nothing decided", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("NOTICE-FORGED");
  expect((await e2e.submit(order)).status).toBe(202);
  const done = await e2e.waitForState(order.orderId, ["Processed"]);
  // An attempt of another order, and a deadline that is not a time.
  const forged = {
    orderId: order.orderId,
    instanceId: "SOMEONE-ELSE:1",
    stepIndex: 0,
    kind: "do",
    completeBy: new Date().toISOString(),
  };
  await sendToQueue(e2e, "deadlines", forged, "forged-notice");
  const rejected = await waitForRejected(e2e, "deadlines", "forged-notice");
  expect(rejected.body).toEqual(forged);
  expect(rejected.applicationProperties).toMatchObject({
    rejectionReason: "invalid",
    originalDeliveryCount: 1,
  });
  expect(rejected.applicationProperties.rejectionDescription).toContain("instanceId");
  const alert = (await alerts.waitFor((m) => (m as { kind: string }).kind === "InvalidMessage")) as {
    orderId: string | null;
    reason: string;
  };
  expect(alert).toMatchObject({ orderId: order.orderId });
  expect(alert.reason).toMatch(/^deadlines: .*instanceId/);
  expect(await e2e.state(order.orderId)).toEqual(done);
}, 40_000);
