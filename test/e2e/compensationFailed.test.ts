/**
 * Failure catalogue: compensation failing. The last step is refused for good, so the order must be undone, but
 * the undo of the charge fails too: permanently (at once) or transiently until the Supervisor's compensation
 * budget is spent. Either way the order stops in CompensationFailed, which only an operator leaves, and an alert
 * names it; the ledger shows exactly what was undone and what was not.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { compensatedLedger, compensationStoppedSteps, faultOn, stepIndex } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

// From the declaration: the last step is refused; the payment step's undo (the refund) fails.
const lastIndex = orderWorkflowV1.steps.length - 1;
const chargeIndex = stepIndex("chargePayment");
const charge = orderWorkflowV1.steps[chargeIndex]!;
const refuseLast = { ...faultOn(lastIndex), kind: "permanent" } as const;
const refund = faultOn(chargeIndex, "undo");

type Message = { orderId: string; kind?: string; status?: string; processState: string; reason?: string };
const label = (e: { service: string; operation: string }) => `${e.service}.${e.operation}`;

it("a refused refund stops compensation in CompensationFailed with an alert; an operator retry finishes it", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("UNDOFAIL");
  await submitWithFaults(e2e, order, refuseLast, { ...refund, kind: "permanent" });

  const record = await e2e.waitForState(order.orderId, ["CompensationFailed"]);
  expect(record).toMatchObject({ lockedBy: null, completeBy: null, failureCount: 0 });
  expect(record.lastError).toMatchObject({ code: "InjectedPermanent" });
  // Undo stopped at the charge: the steps before it (the reservation, older) were not undone.
  expect(record.steps.map((s) => [s.name, s.status, s.undo?.status ?? null])).toEqual(
    compensationStoppedSteps(lastIndex, chargeIndex, "Failed"),
  );

  const alert = (await alerts.waitFor(forOrder(order.orderId))) as Message;
  expect(alert).toMatchObject({
    kind: "CompensationFailed",
    orderId: order.orderId,
    processState: "CompensationFailed",
  });
  expect(alert.reason).toContain(charge.name);
  expect(alert.reason).toContain("InjectedPermanent");
  await statuses.waitFor((m) => forOrder(order.orderId)(m) && (m as Message).status === "compensationFailed");

  // Still charged and still reserved: the refused refund never reached the service, the release never ran.
  const stopped = compensatedLedger(order.orderId, lastIndex, {
    refusedByService: false,
    undoStoppedAt: chargeIndex,
  }).map((call) => [call.label, true]);
  const ledger = await e2e.ledger(order.orderId);
  expect(ledger.map((e) => [label(e), e.applied])).toEqual(stopped);

  // What fixes it: the operator clears the cause and retries; compensation resumes where it stopped.
  await e2e.faults.clear();
  expect((await e2e.operate(order.orderId, "retry")).status).toBe(202);
  const done = await e2e.waitForState(order.orderId, ["Compensated"]);
  expect(done.steps.map((s) => s.undo?.status ?? null)).toEqual(
    done.steps.map((_, i) => (i < lastIndex ? "Succeeded" : null)),
  );
  const after = await e2e.ledger(order.orderId);
  expect(after.map(label)).toEqual(
    compensatedLedger(order.orderId, lastIndex, { refusedByService: false }).map((call) => call.label),
  );
  expect(after.every((e) => e.applied && e.requests === 1)).toBe(true);
  expect((await alerts.all()).filter(forOrder(order.orderId))).toHaveLength(1);
}, 40_000);

it("a refund failing transiently is retried by the Supervisor, then CompensationFailed with an alert", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("UNDOTRANSIENT");
  await submitWithFaults(e2e, order, refuseLast, { ...refund, kind: "transient" });

  const record = await e2e.waitForState(order.orderId, ["CompensationFailed"], 40_000);
  // SUPERVISOR_MAX_FAILURES=2: the third failed compensation attempt is final; forward attempts are not charged.
  expect(record).toMatchObject({ compensationFailureCount: 3, failureCount: 0, lockedBy: null });
  expect(record.lastError).toMatchObject({ code: "RetriesExhausted" });
  expect(record.steps.map((s) => [s.name, s.status, s.undo?.status ?? null])).toEqual(
    compensationStoppedSteps(lastIndex, chargeIndex, "Dispatched"),
  );

  const alert = (await alerts.waitFor(forOrder(order.orderId))) as Message;
  expect(alert).toMatchObject({
    kind: "CompensationFailed",
    orderId: order.orderId,
    processState: "CompensationFailed",
  });
  expect(alert.reason).toContain("3 attempts failed or timed out");
  await statuses.waitFor((m) => forOrder(order.orderId)(m) && (m as Message).status === "compensationFailed");

  const ledger = await e2e.ledger(order.orderId);
  expect(ledger.map((e) => [label(e), e.applied])).toEqual(
    compensatedLedger(order.orderId, lastIndex, {
      refusedByService: false,
      undoStoppedAt: chargeIndex,
    }).map((call) => [call.label, true]),
  );
  expect((await alerts.all()).filter(forOrder(order.orderId))).toHaveLength(1);
  await e2e.faults.clear();
}, 50_000);
