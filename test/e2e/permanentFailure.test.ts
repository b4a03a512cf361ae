/**
 * Failure catalogue: a permanent business failure. The remote service refuses for good (payment declined, or a
 * permanent 4xx on the last step); the same attempt undoes the steps that succeeded, newest first, and the order
 * ends Compensated. Nobody is alerted: this is a clean, automatic outcome.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { type QueueLog } from "../support/e2eQueues";
import {
  compensatedLedger,
  compensatedStatuses,
  compensatedSteps,
  faultOn,
  stepIndex,
} from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

type Status = { orderId: string; status: string; processState: string; detail: string | null };
async function statusesOf(statuses: QueueLog, orderId: string, last: string): Promise<Status[]> {
  await statuses.waitFor((m) => forOrder(orderId)(m) && (m as Status).status === last);
  return (await statuses.all()).filter(forOrder(orderId)) as Status[];
}

it("a declined charge undoes the reservation and ends Compensated", async ({ e2e, alerts, statuses }) => {
  // 2 × 9000 = 18000 EUR, over the simulator's payment limit of 10000: 402 PaymentDeclined.
  const order = e2eOrder("DECLINED", { items: [{ sku: "SKU-1", quantity: 2, unitPrice: 9000 }] });
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(order.orderId, ["Compensated"]);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0, lockedBy: null, completeBy: null });
  expect(record.lastError).toMatchObject({ code: "PaymentDeclined" });
  // The payment step of the declaration refuses; every step before it is undone, newest first.
  const charge = stepIndex("chargePayment");
  expect(record.steps.map((s) => [s.name, s.status, s.undo?.status ?? null])).toEqual(
    compensatedSteps(charge),
  );

  const ledger = await e2e.ledger(order.orderId);
  const expected = compensatedLedger(order.orderId, charge);
  expect(
    ledger.map((e) => ({ label: `${e.service}.${e.operation}`, idempotencyKey: e.idempotencyKey })),
  ).toEqual(expected);
  // The service refused the charge itself (402, nothing applied); every other call was applied.
  expect(ledger.map((e) => [e.status, e.applied])).toEqual(
    expected.map((_, i) => (i === charge ? [402, false] : [200, true])),
  );
  expect(ledger.every((e) => e.requests === 1)).toBe(true);

  const seen = await statusesOf(statuses, order.orderId, "compensated");
  expect(seen.map((s) => s.status)).toEqual(compensatedStatuses(charge));
  expect(seen.find((s) => s.status === "compensating")?.detail).toContain("PaymentDeclined");
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
}, 30_000);

it("a permanent refusal at the last step undoes the charge, then the reservation", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("LASTSTEP");
  const lastIndex = orderWorkflowV1.steps.length - 1;
  await submitWithFaults(e2e, order, { ...faultOn(lastIndex), kind: "permanent" });

  const record = await e2e.waitForState(order.orderId, ["Compensated"]);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0, lockedBy: null });
  expect(record.lastError).toMatchObject({ code: "InjectedPermanent" });
  expect(record.steps.map((s) => [s.name, s.status, s.undo?.status ?? null])).toEqual(
    compensatedSteps(lastIndex),
  );

  // The refused last step never reached its service (the fault answers before it), so it has no entry; the undos
  // follow in reverse order of the steps (for the sample: refund before release).
  const ledger = await e2e.ledger(order.orderId);
  expect(
    ledger.map((e) => ({ label: `${e.service}.${e.operation}`, idempotencyKey: e.idempotencyKey })),
  ).toEqual(compensatedLedger(order.orderId, lastIndex, { refusedByService: false }));
  expect(ledger.every((e) => e.applied && e.status === 200 && e.requests === 1)).toBe(true);

  const seen = await statusesOf(statuses, order.orderId, "compensated");
  expect(seen.map((s) => s.status)).toEqual(compensatedStatuses(lastIndex));
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
  await e2e.faults.clear();
}, 30_000);
