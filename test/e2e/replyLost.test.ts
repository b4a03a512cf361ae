/**
 * Failure catalogue: the reply is lost after the side effect. The payment service charges and stores its
 * response, then the connection dies before the agent hears it. Whoever asks again with the same idempotency key
 * (the agent's own retry, or the next attempt after the Supervisor's retry) gets the stored response back, so the
 * customer is charged once and the order carries the charge id the service actually created.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { type LedgerEntry, type E2E } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { faultOn, processedLedger, stepIndex } from "../support/expectedProcess";
import { e2eTest, type E2EFixtures } from "../support/fixtures";

const it = e2eTest();

// From the declaration: the payment step is the one whose reply is lost.
const CHARGE = stepIndex("chargePayment");
const chargeStep = orderWorkflowV1.steps[CHARGE]!;
const names = orderWorkflowV1.steps.map((s) => s.name);

type Charge = LedgerEntry & { effect: { chargeId: string } };

/** The ledger must show one charge for the order, applied once, whose id is the one the record kept. */
async function expectOneCharge(e2e: E2E, orderId: string, chargeIdInRecord: unknown): Promise<Charge> {
  const ledger = await e2e.ledger(orderId);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied])).toEqual(
    processedLedger(orderId).map((call) => [call.idempotencyKey, true]),
  );
  const charge = ledger[CHARGE] as Charge;
  expect(chargeIdInRecord).toBe(charge.effect.chargeId);
  return charge;
}

async function expectNoAlert(
  { statuses, alerts }: Pick<E2EFixtures, "statuses" | "alerts">,
  orderId: string,
): Promise<void> {
  await statuses.waitFor((m) => forOrder(orderId)(m) && (m as { status: string }).status === "processed");
  expect((await alerts.all()).filter(forOrder(orderId))).toEqual([]);
}

it("the agent's retry with the same key gets the stored response: charged once, Processed on attempt 1", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("LOSTREPLY");
  const id = order.orderId;
  const drop = await e2e.faults.add({
    ...faultOn(CHARGE),
    orderId: id,
    kind: "drop-response",
    count: 1,
  });
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(id, ["Processed"]);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0, lockedBy: null });
  expect(record.history.map((h) => h.event)).not.toContain("stepFailedTransient");
  expect((await e2e.faults.list()).find((f) => f.id === drop.id)).toMatchObject({ hits: 1, remaining: 0 });

  const charge = await expectOneCharge(
    e2e,
    id,
    (record.steps[CHARGE]!.result as { chargeId?: unknown }).chargeId,
  );
  // Two requests reached the charge operation: the one whose reply was lost, and the replay.
  expect(charge.requests).toBe(2);
  await expectNoAlert({ statuses, alerts }, id);
}, 30_000);

it("when the agent cannot get an answer in time, the next attempt's replay finishes the order: charged once", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("LOSTREPLY2");
  const id = order.orderId;
  // The charge runs but its reply is lost, then the service answers 503 to the agent's two retries (faults queue
  // up in creation order): the agent reports transient and the attempt ends with the charge in doubt.
  await e2e.faults.add({
    ...faultOn(CHARGE),
    orderId: id,
    kind: "drop-response",
    count: 1,
  });
  await e2e.faults.add({
    ...faultOn(CHARGE),
    orderId: id,
    kind: "transient",
    count: 2,
  });
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(id, ["Processed"]);
  expect(record).toMatchObject({ attempt: 2, failureCount: 1, lockedBy: null });
  const trail = record.history.map((h) => `${h.attempt} ${h.event} ${h.detail?.split(" ")[0] ?? ""}`.trim());
  expect(trail.slice(trail.indexOf(`1 stepDispatched ${chargeStep.name}`))).toEqual([
    `1 stepDispatched ${chargeStep.name}`,
    `1 stepFailedTransient ${chargeStep.name}:`,
    "1 expired attempt",
    `2 claimed ${id}:2`,
    ...names.slice(CHARGE).flatMap((n) => [`2 stepDispatched ${n}`, `2 stepSucceeded ${n}`]),
    "2 processed",
  ]);

  const charge = await expectOneCharge(
    e2e,
    id,
    (record.steps[CHARGE]!.result as { chargeId?: unknown }).chargeId,
  );
  // The lost one in attempt 1 and the replay in attempt 2; the 503s stopped in front of the service.
  expect(charge.requests).toBe(2);
  await expectNoAlert({ statuses, alerts }, id);
}, 30_000);
