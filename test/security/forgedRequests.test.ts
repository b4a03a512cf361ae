/**
 * Hostile input on the agents' request queues: requests the Scheduler never dispatched, sent by someone holding a
 * send right. The agent measures each against its order's state record before any call: one that is not the
 * dispatch in progress is refused (set aside on rejected-messages, one InvalidMessage alert), the remote service is
 * never called, and the order, its record and the ledger stay as they were. A genuine order still goes through.
 */
import { expect } from "vitest";
import { agentRequestId, idempotencyKeyFor, type StepKind } from "../../src/domain";
import { e2eOrder, expectOneSetOfEffects, orderSnapshot } from "../support/e2eOrders";
import { sendToQueue, waitForRejected } from "../support/e2eQueues";
import { e2eTest, type E2EFixtures } from "../support/fixtures";

// One agent call that hangs for 30 s inside a 40 s step: the step stays Dispatched while the test forges.
const it = e2eTest({
  STEP_TIMEOUT_SECONDS: "40",
  AGENT_ATTEMPT_TIMEOUT_SECONDS: "30",
  AGENT_MAX_ATTEMPTS: "1",
});

type Alert = { kind: string; orderId: string | null; reason: string };

/** A payment request with every id right for `orderId`'s attempt 1, carrying whatever operation and body. */
function paymentRequest(
  orderId: string,
  kind: StepKind,
  payload: { operation: string; body: Record<string, unknown> },
) {
  const instanceId = `${orderId}:1`;
  return {
    requestId: agentRequestId(instanceId, 1, kind),
    orderId,
    instanceId,
    stepIndex: 1,
    step: "chargePayment",
    kind,
    payload,
    completeBy: new Date(Date.now() + 30_000).toISOString(),
    idempotencyKey: idempotencyKeyFor(orderId, "chargePayment", kind),
  };
}

/** Sends the forged request, then checks it was set aside with one alert whose reason says `names`. */
async function expectRefused(
  { e2e, alerts }: Pick<E2EFixtures, "e2e" | "alerts">,
  forged: { id: string; body: unknown; names: string; orderId: string },
) {
  await sendToQueue(e2e, "payment-requests", forged.body, forged.id);
  const rejected = await waitForRejected(e2e, "payment-requests", forged.id);
  expect(rejected.applicationProperties, forged.id).toMatchObject({
    rejectionReason: "refused",
    originalDeliveryCount: 1,
  });
  expect(String(rejected.applicationProperties.rejectionDescription), forged.id).toContain(forged.names);
  const alert = (await alerts.waitFor((m) => (m as Alert).reason.includes(forged.names))) as Alert;
  expect(alert, forged.id).toMatchObject({ kind: "InvalidMessage", orderId: forged.orderId });
  expect(alert.reason.startsWith("payment-requests: "), forged.id).toBe(true);
  expect(alert.reason.length, forged.id).toBeLessThanOrEqual(1024);
  const raised = (await alerts.all()) as Alert[];
  expect(
    raised.filter((a) => a.reason.includes(forged.names)),
    forged.id,
  ).toHaveLength(1);
}

it("refuses a charge for an order that does not exist: no call to the payment service", async ({
  e2e,
  alerts,
}) => {
  const orderId = "FORGED-REQ-GHOST";
  await expectRefused(
    { e2e, alerts },
    {
      id: "forged-charge",
      body: paymentRequest(orderId, "do", {
        operation: "charge",
        body: { orderId, amount: 4321.5, currency: "EUR" },
      }),
      names: `step 1 do of ${orderId}:1: order ${orderId} does not exist`,
      orderId,
    },
  );
  expect(await e2e.ledger(orderId)).toEqual([]);
  expect(await e2e.state(orderId)).toBeNull();
}, 60_000);

it("refuses a refund for a Processed order: the charge stands, the record is unchanged", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("FORGED-REQ-DONE");
  expect((await e2e.submit(order)).status).toBe(202);
  const done = await e2e.waitForState(order.orderId, ["Processed"]);
  const before = await orderSnapshot(e2e, order.orderId);
  await expectRefused(
    { e2e, alerts },
    {
      id: "forged-refund",
      body: paymentRequest(order.orderId, "undo", {
        operation: "refund",
        body: { orderId: order.orderId, ...(done.steps[1]!.compensation as Record<string, unknown>) },
      }),
      names: `step 1 undo of ${order.orderId}:1: no such request was dispatched (chargePayment undo last dispatched as none)`,
      orderId: order.orderId,
    },
  );
  expect(await orderSnapshot(e2e, order.orderId)).toEqual(before);
  await expectOneSetOfEffects(e2e, order.orderId);
}, 60_000);

it("refuses a request for the step in progress whose body is not the one the Scheduler dispatched", async ({
  e2e,
  alerts,
}) => {
  // The genuine charge hangs in the payment service, so the step stays Dispatched while the forgery arrives.
  const order = e2eOrder("FORGED-REQ-BODY");
  await e2e.faults.add({ service: "payment", orderId: order.orderId, kind: "hang" });
  expect((await e2e.submit(order)).status).toBe(202);
  const waiting = await e2e.waitForRecord(
    order.orderId,
    (r) => r.steps[1]?.status === "Dispatched",
    "the charge dispatched",
  );
  const before = await orderSnapshot(e2e, order.orderId);
  // Every id as the Scheduler sent them, under another MessageId (the queue's duplicate detection would drop the
  // same one), with the amount changed.
  const forged = {
    ...paymentRequest(order.orderId, "do", {
      operation: "charge",
      body: { orderId: order.orderId, amount: 4321.5, currency: order.currency },
    }),
    completeBy: waiting.steps[1]!.completeBy,
  };
  await expectRefused(
    { e2e, alerts },
    {
      id: "forged-amount",
      body: forged,
      names: `step 1 do of ${order.orderId}:1: payload.body differs from the body the Scheduler dispatched`,
      orderId: order.orderId,
    },
  );
  expect(await orderSnapshot(e2e, order.orderId)).toEqual(before);
  expect((await e2e.ledger(order.orderId)).map((e) => e.operation)).toEqual(["reserve"]);
}, 60_000);

it("still takes a genuine order through every step", async ({ e2e }) => {
  const order = e2eOrder("FORGED-REQ-GENUINE");
  expect((await e2e.submit(order)).status).toBe(202);
  await e2e.waitForState(order.orderId, ["Processed"]);
  await expectOneSetOfEffects(e2e, order.orderId);
}, 60_000);
