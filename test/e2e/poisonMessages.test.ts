/**
 * Failure catalogue: poison messages. A submission that can never be accepted (not JSON, wrong types, missing
 * fields, a replyTo outside the status queues) is set aside on rejected-messages with the reason in its properties,
 * after one delivery and without a failed invocation, and raises one InvalidOrder alert that names the bad field; through the front door the same bodies get a 400 (or 413) naming it. Nothing is
 * written to the store and no remote service is called.
 */
import { createHash } from "node:crypto";
import net from "node:net";
import { CosmosClient } from "@azure/cosmos";
import { EMULATOR_KEY } from "devhost/emulators";
import { expect } from "vitest";
import { type E2E } from "../support/e2e";
import { e2eOrder } from "../support/e2eOrders";
import { peekAll, sendToQueue, waitForRejected } from "../support/e2eQueues";
import { e2eTest } from "../support/fixtures";
import { HOST_BODY_LIMIT_SETTING, hostRequestBodyLimit, loadConfig } from "../../src/config";
import { jsonText } from "../../src/messaging/jsonText";
import { SET_ASIDE_PREVIEW_BYTES } from "../../src/messaging/serviceBus";
import { CONTAINERS } from "../../src/store/cosmos";
import { SetAsideBodies } from "../../src/store/setAsideBodies";
import { sampleSettings } from "../../tools/repository";

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

it("POSTed declaring 50 MB: the host answers 413 from the declared length, before a byte of the body is sent", async ({
  e2e,
}) => {
  const { hostname, port } = new URL(e2e.host.url);
  const socket = net.connect(Number(port), hostname);
  const answer = new Promise<string>((resolve, reject) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    // The host closes the connection after its answer: the body it did not read cannot be skipped.
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
  socket.write(
    `POST /api/orders HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
      `content-length: ${50 * 1024 * 1024}\r\n\r\n`,
  );
  const response = await answer;
  expect(response).toMatch(/^HTTP\/1\.1 413 /);
  const limit = hostRequestBodyLimit(loadConfig(sampleSettings()).maxRequestBytes);
  expect(response).toContain(`${limit} bytes (${HOST_BODY_LIMIT_SETTING})`);
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

it("near the size limit: set aside cut, with its size, hash and the whole body in the store; smaller ones refused with it set aside whole", async ({
  e2e,
}) => {
  // The original fits the broker's 256 KiB; its copy, the same body with the rejection's properties, does not.
  const big = e2eOrder("POISON-NEAR-LIMIT", { customerId: "C".repeat(261_000) });
  const smalls = [1, 2, 3].map((n) => e2eOrder(`POISON-BESIDE-${n}`, { customerId: "" }));
  await Promise.all([
    sendToQueue(e2e, "orders", big, "POISON-NEAR-LIMIT-message"),
    ...smalls.map((s) => sendToQueue(e2e, "orders", s, s.orderId)),
  ]);

  const cut = await waitForRejected(e2e, "orders", "POISON-NEAR-LIMIT-message");
  const whole = Buffer.from(jsonText(big));
  expect(cut.applicationProperties).toMatchObject({
    rejectionReason: "invalid",
    originalDeliveryCount: 1,
    bodyCut: true,
    originalBodyBytes: whole.length,
    originalBodySha256: createHash("sha256").update(whole).digest("hex"),
    originalContentType: "application/json",
    fullBodyParts: 1,
  });
  expect(cut.applicationProperties.rejectionDescription).toContain("customerId:");
  const preview = Buffer.from(cut.body as Uint8Array);
  expect(preview.length).toBe(SET_ASIDE_PREVIEW_BYTES);
  expect(whole.subarray(0, preview.length).equals(preview)).toBe(true);
  const [container, id] = String(cut.applicationProperties.fullBodyAt).split("/");
  expect(container).toBe(CONTAINERS.rejected);
  expect((await keptBody(e2e, id!))?.equals(whole)).toBe(true);

  for (const small of smalls) {
    const rejected = await waitForRejected(e2e, "orders", small.orderId);
    expect(rejected.body, small.orderId).toEqual(small);
    expect(rejected.applicationProperties.bodyCut, small.orderId).toBeUndefined();
  }
  expect(await peekAll(e2e, "orders", "deadLetter")).toEqual([]);
}, 40_000);

/** The body the app kept in the state store under `id`, read as an operator would, through the real client. */
async function keptBody(e2e: E2E, id: string): Promise<Buffer | null> {
  const client = new CosmosClient({ endpoint: e2e.emulators.cosmosEndpoint, key: EMULATOR_KEY });
  try {
    const container = client.database(sampleSettings().COSMOS_DATABASE!).container(CONTAINERS.rejected);
    return await new SetAsideBodies(container).read(id);
  } finally {
    client.dispose();
  }
}
