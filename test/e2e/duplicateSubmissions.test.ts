/**
 * Failure catalogue: duplicate and conflicting submissions. The same order sent twice (a client retry, or a
 * redelivery that escaped duplicate detection) is one order with one set of side effects. The same orderId with
 * different data is a conflict: refused at the front door, set aside on rejected-messages with an alert on the queue, and never an
 * overwrite of the stored order.
 */
import { expect } from "vitest";
import { type E2E } from "../support/e2e";
import { e2eOrder, expectOneSetOfEffects, forOrder } from "../support/e2eOrders";
import { peekAll, waitForRejected, sendToQueue } from "../support/e2eQueues";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

type Alert = { kind: string; orderId: string | null; reason: string };
const sendToOrdersQueue = (e2e: E2E, body: unknown, messageId: string) =>
  sendToQueue(e2e, "orders", body, messageId);

/** One order processed once: three effects, each applied by one request under its own key. */

async function waitForLog(e2e: E2E, text: string, timeoutMs = 15_000): Promise<void> {
  await expect
    .poll(() => e2e.logs.some((r) => r.message.includes(text)), {
      timeout: timeoutMs,
      interval: 100,
      message: `no log line containing "${text}" within ${timeoutMs} ms`,
    })
    .toBe(true);
}

it("the same order POSTed twice is one order with one set of effects", async ({ e2e, alerts }) => {
  const order = e2eOrder("DUPPOST");
  const [first, second] = await Promise.all([e2e.submit(order), e2e.submit(order)]);
  expect([first.status, second.status]).toEqual([202, 202]);
  // A third POST after the order is stored is also accepted: same data, same id, nothing new happens.
  await e2e.waitForState(order.orderId, ["Pending", "Processing", "Processed"]);
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(order.orderId, ["Processed"]);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0 });
  await expectOneSetOfEffects(e2e, order.orderId);
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
}, 30_000);

it("the same order sent twice to the queue under different MessageIds is accepted once", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("DUPQUEUE");
  // Different MessageIds get past duplicate detection: both copies reach submitOrder, at the same time.
  await Promise.all([
    sendToOrdersQueue(e2e, order, `${order.orderId}-copy-1`),
    sendToOrdersQueue(e2e, order, `${order.orderId}-copy-2`),
  ]);

  const record = await e2e.waitForState(order.orderId, ["Processed"]);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0 });
  await waitForLog(e2e, `order ${order.orderId} already accepted`);
  expect(e2e.logs.filter((r) => r.message.includes(`order ${order.orderId} accepted`))).toHaveLength(1);
  await expectOneSetOfEffects(e2e, order.orderId);

  // Neither copy was refused: none is set aside, none dead-lettered.
  const ours = (m: { messageId: unknown }) => String(m.messageId).startsWith(order.orderId);
  expect((await peekAll(e2e, "orders", "deadLetter")).filter(ours)).toEqual([]);
  expect(
    (await peekAll(e2e, "rejected-messages")).filter((m) =>
      String(m.applicationProperties.originalMessageId).startsWith(order.orderId),
    ),
  ).toEqual([]);
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
}, 30_000);

it("the same orderId with different data is refused (409 at the door, set aside + alert on the queue)", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("CONFLICT");
  expect((await e2e.submit(order)).status).toBe(202);
  const stored = await e2e.waitForState(order.orderId, ["Processed"]);
  const conflicting = { ...order, items: [{ sku: "SKU-2", quantity: 5, unitPrice: 1.5 }] };

  const refused = await e2e.submit(conflicting);
  expect(refused.status).toBe(409);
  expect(((await refused.json()) as { error: string }).error).toContain(
    `order ${order.orderId} was already submitted with different data`,
  );

  // Straight to the queue under the MessageId the first version had: the queue has no duplicate detection to drop
  // it unseen, so it reaches the app, which refuses it.
  const messageId = order.orderId;
  await sendToOrdersQueue(e2e, conflicting, messageId);
  const rejected = await waitForRejected(e2e, "orders", messageId);
  expect(rejected.applicationProperties).toMatchObject({
    rejectionReason: "conflict",
    originalDeliveryCount: 1,
  });
  expect(rejected.applicationProperties.rejectionDescription).toContain(
    "already submitted with different data",
  );
  expect(rejected.body).toMatchObject({ orderId: order.orderId, items: conflicting.items });

  // The alert goes out once.
  const conflictAlerts = (await alerts.all()).filter(forOrder(order.orderId)) as Alert[];
  expect(conflictAlerts).toHaveLength(1);
  expect(conflictAlerts[0]).toMatchObject({ kind: "OrderConflict", orderId: order.orderId });
  expect(conflictAlerts[0]!.reason).toContain("already submitted with different data");

  // Nothing was overwritten: the stored order, its state record and its effects are those of the first submission.
  const res = await e2e.api(`/api/orders/${order.orderId}`);
  const after = (await res.json()) as {
    order: { items: unknown; fingerprint: string };
    state: typeof stored;
  };
  expect(after.order.items).toEqual(order.items);
  expect(after.state).toMatchObject({
    processState: "Processed",
    fingerprint: stored.fingerprint,
    attempt: 1,
    updatedAt: stored.updatedAt,
  });
  expect(after.order.fingerprint).toBe(stored.fingerprint);
  await expectOneSetOfEffects(e2e, order.orderId);
}, 40_000);
