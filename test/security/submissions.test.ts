/**
 * Submissions that race or lie. Two versions of one order submitted at once are never both accepted and never
 * silently dropped: through the front door exactly one gets 202 and the other 409; on the `orders` queue, even
 * under the same MessageId, one is accepted and the other set aside on rejected-messages with an OrderConflict alert. Bodies no
 * producer should send (binary, huge) are set aside with an alert that describes them in a line, and what a
 * message says of itself (its keys, its MessageId) reaches an alert, a rejection or a log line escaped, never as a
 * line of its own.
 */
import { expect } from "vitest";
import { type E2E } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { peekAll, sendToQueue, waitForRejected } from "../support/e2eQueues";
import { e2eTest } from "../support/fixtures";
import { RAW_CONTROL } from "../support/text";

const it = e2eTest();

type Alert = { kind: string; orderId: string | null; reason: string };

const PAIRS = 20;

/** Two versions of one order: the same orderId, one item differing. */
function versions(prefix: string) {
  const a = e2eOrder(prefix);
  const b = { ...a, items: [{ sku: "SKU-2", quantity: 1, unitPrice: 5 }] };
  return [a, b] as const;
}

async function storedItems(e2e: E2E, orderId: string): Promise<unknown> {
  const res = await e2e.api(`/api/orders/${orderId}`);
  return ((await res.json()) as { order: { items: unknown } }).order.items;
}

it(`through the front door, ${PAIRS} pairs of versions POSTed at once: one 202 and one 409 each`, async ({
  e2e,
  alerts,
}) => {
  const pairs = Array.from({ length: PAIRS }, () => versions("RACE"));
  const answers = await Promise.all(pairs.map(async ([a, b]) => Promise.all([e2e.submit(a), e2e.submit(b)])));
  for (const [i, [ra, rb]] of answers.entries()) {
    const [a, b] = pairs[i]!;
    expect([ra.status, rb.status].sort(), a.orderId).toEqual([202, 409]);
    const winner = ra.status === 202 ? a : b;
    const loser = ra.status === 202 ? rb : ra;
    expect(((await loser.json()) as { error: string }).error).toBe(
      `order ${a.orderId} was already submitted with different data`,
    );
    // What was stored, and then processed, is the version that was told 202.
    await e2e.waitForState(a.orderId, ["Processed"]);
    expect(await storedItems(e2e, a.orderId), a.orderId).toEqual(winner.items);
    const charges = (await e2e.ledger(a.orderId)).filter((e) => e.operation === "charge");
    expect(charges, a.orderId).toHaveLength(1);
    expect(b.orderId).toBe(a.orderId);
  }
  // A refusal at the door is the client's answer, not an operator's problem: no alert.
  expect((await alerts.all()).filter((m) => pairs.some(([a]) => forOrder(a.orderId)(m)))).toEqual([]);
}, 90_000);

it(`on the queue, ${PAIRS} pairs of versions under one MessageId: one accepted, one set aside with an alert`, async ({
  e2e,
  alerts,
}) => {
  const pairs = Array.from({ length: PAIRS }, () => versions("QRACE"));
  // The same MessageId for both versions, as a producer keyed on the orderId would send them.
  await Promise.all(
    pairs.flatMap(([a, b]) => [
      sendToQueue(e2e, "orders", a, a.orderId),
      sendToQueue(e2e, "orders", b, b.orderId),
    ]),
  );
  for (const [a, b] of pairs) {
    await e2e.waitForState(a.orderId, ["Processed"]);
    const stored = await storedItems(e2e, a.orderId);
    const loser = JSON.stringify(stored) === JSON.stringify(a.items) ? b : a;
    const rejected = await waitForRejected(e2e, "orders", a.orderId);
    expect((rejected.body as { items: unknown }).items, a.orderId).toEqual(loser.items);
    expect(rejected.applicationProperties.rejectionReason, a.orderId).toBe("conflict");
    const alert = (await alerts.waitFor(forOrder(a.orderId))) as Alert;
    expect(alert).toMatchObject({ kind: "OrderConflict", orderId: a.orderId });
    expect(alert.reason).toContain("already submitted with different data");
  }
  // Exactly one refusal set aside per pair: the accepted version was not set aside too.
  const rejected = (await peekAll(e2e, "rejected-messages")).filter((m) =>
    String(m.applicationProperties.originalMessageId).startsWith("QRACE"),
  );
  expect(rejected).toHaveLength(PAIRS);
}, 120_000);

it("sets a binary or huge submission aside with a one-line, bounded alert", async ({ e2e, alerts }) => {
  const binary = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37 + 128) % 256));
  const huge = {
    ...e2eOrder("HUGE"),
    ...Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])),
  };
  await sendToQueue(e2e, "orders", binary, "hostile-binary", "application/octet-stream");
  await sendToQueue(e2e, "orders", huge, "hostile-huge");

  const binaryRejected = await waitForRejected(e2e, "orders", "hostile-binary");
  expect(Buffer.from(binaryRejected.body as Uint8Array).equals(binary)).toBe(true);
  expect(binaryRejected.applicationProperties.rejectionDescription).toBe(
    "(root): binary body of 512 bytes, expected a JSON object",
  );
  const binaryAlert = (await alerts.waitFor((m) => (m as Alert).reason.includes("binary body"))) as Alert;
  expect(binaryAlert).toMatchObject({
    kind: "InvalidOrder",
    orderId: null,
    reason: "(root): binary body of 512 bytes, expected a JSON object",
  });

  await waitForRejected(e2e, "orders", "hostile-huge");
  const hugeAlert = (await alerts.waitFor(forOrder(huge.orderId))) as Alert;
  expect(hugeAlert.kind).toBe("InvalidOrder");
  expect(hugeAlert.reason).toBe(
    "(root): unknown field(s) k0, k1, k2, k3, k4 and 9995 more: expected only the fields of an order object",
  );
  expect(hugeAlert.reason.length).toBeLessThanOrEqual(1024);
  // Nothing was written for it.
  expect((await e2e.api(`/api/orders/${huge.orderId}`)).status).toBe(404);
}, 60_000);

it("escapes a forged field name and MessageId in the alert, the rejection and the log lines", async ({
  e2e,
  alerts,
}) => {
  const forgery = "\n[alert] ALERT Error order=ORD-1 state=Error: payment failed";
  const order = {
    ...e2eOrder("FORGED"),
    [`a${forgery}`]: 1,
    [`b\r\u2028\u0085${forgery}`]: 2,
  };
  const messageId = `forged-key${forgery}`;
  await sendToQueue(e2e, "orders", order, messageId);

  const rejected = await waitForRejected(e2e, "orders", messageId);
  const alert = (await alerts.waitFor(forOrder(order.orderId))) as Alert;
  expect(alert.kind).toBe("InvalidOrder");
  expect(alert.reason).toBe(
    "(root): unknown field(s) a\\n[alert] ALERT Error order=ORD-1 state..., " +
      "b\\r\\u2028\\u0085\\n[alert] ALERT Error ord...: expected only the fields of an order object",
  );
  expect(rejected.applicationProperties.rejectionDescription).toBe(alert.reason);
  // Every line the app wrote about it, the ALERT line and the set-aside one among them, is one line. (The host's
  // own "Trigger Details" line repeats the MessageId as sent: the Functions host's, not the app's, to escape.)
  const lines = e2e.logs.filter(
    (r) => r.category === "user" && (r.message.includes(order.orderId) || r.message.includes("forged-key")),
  );
  expect(lines.map((r) => r.message)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^ALERT InvalidOrder order=FORGED-/),
      expect.stringMatching(
        /^orders: message forged-key\\n\[alert\] .* set aside on rejected-messages: invalid: /,
      ),
    ]),
  );
  for (const line of lines) expect(line.message).not.toMatch(RAW_CONTROL);
  expect((await e2e.api(`/api/orders/${order.orderId}`)).status).toBe(404);
}, 60_000);
