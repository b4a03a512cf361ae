/**
 * Failure catalogue: the remote service is slower than the deadline. Every charge call takes 3.5 s, longer than
 * the 3 s step timeout: the orchestration's durable timer wins the race, the agent gives up at completeBy without
 * replying, and the service applies the charge after the deadline anyway. The Supervisor retries; the next
 * attempt asks again with the same idempotency key and gets the stored response, so the late effect is adopted,
 * never repeated.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { type LedgerEntry } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { faultOn, processedLedger, stepIndex } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { waitUntilPast } from "../support/wait";

const it = e2eTest();

// From the declaration: the payment step is the slow one.
const CHARGE = stepIndex("chargePayment");
const charge = orderWorkflowV1.steps[CHARGE]!;

it("the timer wins, the late effect lands after the deadline, and the retry adopts it: one charge", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("SLOW");
  const id = order.orderId;
  const slow = await e2e.faults.add({
    ...faultOn(CHARGE),
    orderId: id,
    kind: "latency",
    latencyMs: 3500,
  });
  expect((await e2e.submit(order)).status).toBe(202);

  const dispatched = await e2e.waitForRecord(
    id,
    (r) => r.attempt === 1 && r.steps[CHARGE]!.status === "Dispatched",
    "the charge dispatched on attempt 1",
  );
  const deadline = dispatched.steps[CHARGE]!.completeBy!;
  // Calls of attempt 1 all started before its deadline (the agent starts none after it) and stay slow; later
  // calls, from the retry, find the service fast again.
  await waitUntilPast(deadline);
  await e2e.faults.remove(slow.id);

  const record = await e2e.waitForState(id, ["Processed"]);
  expect(record).toMatchObject({ attempt: 2, failureCount: 1, lockedBy: null, completeBy: null });
  // No reply was recorded for attempt 1's charge: its history ends with the Supervisor's expiry.
  const trail = record.history.map((h) => `${h.attempt} ${h.event} ${h.detail?.split(" ")[0] ?? ""}`.trim());
  expect(trail.filter((t) => t.startsWith("1 ")).slice(-2)).toEqual([
    `1 stepDispatched ${charge.name}`,
    "1 expired attempt",
  ]);
  expect(trail).toContain(`2 stepSucceeded ${charge.name}`);
  // The agent did call, and gave up at completeBy instead of replying late.
  expect(
    e2e.logs.some((l) => l.message.includes(`no reply for ${id}:1:${CHARGE}:do: completeBy passed`)),
  ).toBe(true);

  const ledger = await e2e.ledger(id);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied])).toEqual(
    processedLedger(id).map((call) => [call.idempotencyKey, true]),
  );
  const charged = ledger[CHARGE] as LedgerEntry & { effect: { chargeId: string } };
  // The remote really was slower than the deadline: the charge happened after attempt 1 had given up on it.
  expect(new Date(charged.firstAt).getTime()).toBeGreaterThan(new Date(deadline).getTime());
  // Slow calls of attempt 1 plus the retry's call all reached the service; only the first one charged.
  expect(charged.requests).toBeGreaterThanOrEqual(2);
  expect((record.steps[CHARGE]!.result as { chargeId?: unknown }).chargeId).toBe(charged.effect.chargeId);

  await statuses.waitFor((m) => forOrder(id)(m) && (m as { status: string }).status === "processed");
  expect((await alerts.all()).filter(forOrder(id))).toEqual([]);
}, 40_000);
