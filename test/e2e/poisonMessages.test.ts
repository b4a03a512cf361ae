/**
 * Failure catalogue: poison messages. A submission that can never be accepted (not JSON, wrong types, missing
 * fields, a replyTo outside the status queues) is set aside on rejected-messages with the reason in its properties,
 * after one delivery and without a failed invocation, and raises one InvalidOrder alert that names the bad field; through the front door the same bodies get a 400 (or 413) naming it. Nothing is
 * written to the store and no remote service is called.
 */
import { expect } from "vitest";
import { type E2E } from "../support/e2e";
import { e2eOrder } from "../support/e2eOrders";
import { peekAll, sendToQueue, waitForRejected } from "../support/e2eQueues";
import { e2eTest } from "../support/fixtures";
import { jsonText } from "../../src/messaging/jsonText";

const it = e2eTest();

type Alert = { kind: string; orderId: string | null; processState: string | null; reason: string };

const wrongTypes = e2eOrder("POISON-TYPES", { items: [{ sku: "SKU-1", quantity: "two", unitPrice: 9.99 }] });
const missingField = (() => {
  const { currency: _currency, ...rest } = e2eOrder("POISON-MISSING");
  return rest;
})();
const badReplyTo = e2eOrder("POISON-REPLYTO", { replyTo: "orders" });
const notJson = '{"orderId": "POISON-JSON", "items": [';

/** Each poison body, the field its refusal must name, and the orderId it carries (none for broken JSON). */
const cases = [
  {
    name: "wrong types",
    body: wrongTypes as unknown,
    field: "items.0.quantity",
    orderId: wrongTypes.orderId,
  },
  { name: "missing field", body: missingField as unknown, field: "currency", orderId: missingField.orderId },
  {
    name: "replyTo outside status-*",
    body: badReplyTo as unknown,
    field: "replyTo",
    orderId: badReplyTo.orderId,
  },
];

const sendRaw = (e2e: E2E, body: unknown, messageId: string) => sendToQueue(e2e, "orders", body, messageId);

it("sent straight to the orders queue: set aside with its reason, one InvalidOrder alert naming the field", async ({
  e2e,
  alerts,
}) => {
  await Promise.all([
    ...cases.map((c) => sendRaw(e2e, c.body, c.orderId)),
    sendRaw(e2e, notJson, "POISON-JSON-message"),
  ]);

  for (const c of cases) {
    const rejected = await waitForRejected(e2e, "orders", c.orderId);
    expect(rejected.body, c.name).toEqual(c.body);
    expect(rejected.applicationProperties, c.name).toMatchObject({
      rejectedFrom: "orders",
      rejectionReason: "invalid",
      originalMessageId: c.orderId,
      // Set aside on its first delivery: the invocation did not fail, so the host did not redeliver it.
      originalDeliveryCount: 1,
    });
    expect(rejected.applicationProperties.rejectionDescription, c.name).toContain(`${c.field}:`);
    const alert = (await alerts.waitFor((m) => (m as Alert).orderId === c.orderId)) as Alert;
    expect(alert, c.name).toMatchObject({ kind: "InvalidOrder", orderId: c.orderId, processState: null });
    expect(alert.reason, c.name).toContain(`${c.field}:`);
  }
  const rejected = await waitForRejected(e2e, "orders", "POISON-JSON-message");
  expect(rejected.body).toBe(notJson);
  expect(rejected.applicationProperties).toMatchObject({
    rejectionReason: "invalid",
    originalDeliveryCount: 1,
  });
  expect(rejected.applicationProperties.rejectionDescription).toContain("(root):");
  const alert = (await alerts.waitFor((m) => (m as Alert).orderId === null)) as Alert;
  expect(alert).toMatchObject({ kind: "InvalidOrder", orderId: null });
  expect(alert.reason).toContain("(root):");

  // One alert and one set-aside copy per poison message, and nothing left to dead-letter.
  const all = (await alerts.all()) as Alert[];
  expect(all.map((a) => a.kind)).toEqual(["InvalidOrder", "InvalidOrder", "InvalidOrder", "InvalidOrder"]);
  expect(new Set(all.map((a) => a.orderId)).size).toBe(4);
  expect(await peekAll(e2e, "rejected-messages")).toHaveLength(4);
  expect(await peekAll(e2e, "orders", "deadLetter")).toEqual([]);
}, 40_000);

it("POSTed to /api/orders: 400 naming the field, 413 when oversize", async ({ e2e }) => {
  for (const c of cases) {
    const res = await e2e.submit(c.body);
    expect(res.status, c.name).toBe(400);
    expect(((await res.json()) as { error: string }).error, c.name).toContain(`${c.field}:`);
  }
  const broken = await e2e.api("/api/orders", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: notJson,
  });
  expect(broken.status).toBe(400);
  expect(((await broken.json()) as { error: string }).error).toContain("body: expected JSON");

  const oversize = e2eOrder("POISON-BIG", { customerId: "C".repeat(70_000) });
  const big = await e2e.submit(oversize);
  expect(big.status).toBe(413);
  expect(((await big.json()) as { error: string }).error).toContain("body: expected at most 65536 bytes");
});

it("wrote nothing: no order, no state record, no remote call", async ({ e2e }) => {
  for (const orderId of [...cases.map((c) => c.orderId), "POISON-JSON"]) {
    expect((await e2e.api(`/api/orders/${orderId}`)).status, orderId).toBe(404);
  }
  const stats = (await (await e2e.api("/api/stats")).json()) as { counts: Record<string, number> };
  expect(Object.values(stats.counts).every((n) => n === 0)).toBe(true);
  expect(await e2e.ledger()).toEqual([]);
});

it("nested 50,000 deep: set aside after one delivery with its bytes as sent, not dead-lettered", async ({
  e2e,
  alerts,
}) => {
  // Deeper than JSON.stringify can go (it recurses): the app must forward the body without re-serialising it
  // that way. The producer sends the bytes, as any client in any language could.
  const depth = 50_000;
  const text = `{"orderId":"POISON-DEEP","a":${"[".repeat(depth)}${"]".repeat(depth)}}`;
  await sendToQueue(e2e, "orders", Buffer.from(text), "POISON-DEEP-message");

  const rejected = await waitForRejected(e2e, "orders", "POISON-DEEP-message");
  expect(rejected.applicationProperties).toMatchObject({
    rejectionReason: "invalid",
    originalDeliveryCount: 1,
  });
  // The receiving SDK parses the JSON back; its text is the text that was sent.
  expect(jsonText(rejected.body)).toBe(text);
  const alert = (await alerts.waitFor((m) => (m as Alert).orderId === "POISON-DEEP")) as Alert;
  expect(alert).toMatchObject({ kind: "InvalidOrder", processState: null });
  expect(await peekAll(e2e, "orders", "deadLetter")).toEqual([]);
});
