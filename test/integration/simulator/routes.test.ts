// The simulator's routes, business rules, idempotency, closed-order (tombstone) rule and request validation,
// exercised over HTTP with fetch as the app's agents will call them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../../tools/simulator";
import { call, ledger, post, startTestSimulator } from "../../support/simulator";

let sim: Simulator;
const address = { line1: "1 Main St", city: "Berlin", postalCode: "10115", country: "DE" };

beforeAll(async () => {
  sim = await startTestSimulator({ paymentLimit: 500, stock: { "SKU-RARE": 3 } });
});
afterAll(async () => {
  await sim?.stop();
});
beforeEach(async () => {
  expect((await call(`${sim.url}/_ledger`, "DELETE")).status).toBe(204);
});

const stockOf = async (sku: string): Promise<number> =>
  (await call(`${sim.url}/inventory/stock/${sku}`, "GET")).body.available as number;

describe("health", () => {
  it("answers ok with the payment limit it declines over, so a client needs no copy of it", async () => {
    expect(await call(`${sim.url}/_health`, "GET")).toMatchObject({
      status: 200,
      body: { status: "ok", paymentLimit: 500 },
    });
  });
});

describe("inventory", () => {
  it("reserves stock and releases it", async () => {
    const reserved = await post(
      `${sim.url}/inventory/reserve`,
      { orderId: "O-1", items: [{ sku: "SKU-1", quantity: 2 }] },
      "O-1:reserve:do",
    );
    expect(reserved.status).toBe(200);
    expect(reserved.body).toMatchObject({ orderId: "O-1", reservationId: expect.stringMatching(/^RES-/) });
    expect(await stockOf("SKU-1")).toBe(998);

    const released = await post(
      `${sim.url}/inventory/release`,
      { orderId: "O-1", reservationId: reserved.body.reservationId },
      "O-1:reserve:undo",
    );
    expect(released.status).toBe(200);
    expect(released.body).toEqual({ orderId: "O-1", undone: [reserved.body.reservationId], noop: false });
    expect(await stockOf("SKU-1")).toBe(1000);
  });

  it("refuses more than the stock with 409 OutOfStock, naming the sku, and reserves nothing", async () => {
    const refused = await post(
      `${sim.url}/inventory/reserve`,
      {
        orderId: "O-2",
        items: [
          { sku: "SKU-RARE", quantity: 2 },
          { sku: "SKU-1", quantity: 1 },
          { sku: "SKU-RARE", quantity: 2 },
        ],
      },
      "O-2:reserve:do",
    );
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("OutOfStock");
    expect(refused.body.message).toContain("SKU-RARE (requested 4, available 3)");
    expect(await stockOf("SKU-RARE")).toBe(3);
    expect(await stockOf("SKU-1")).toBe(1000);
    expect(await ledger(sim)).toMatchObject([{ operation: "reserve", applied: false, status: 409 }]);
  });

  it("releases the order's reservation when the undo does not know its id", async () => {
    await post(
      `${sim.url}/inventory/reserve`,
      { orderId: "O-3", items: [{ sku: "SKU-RARE", quantity: 3 }] },
      "O-3:reserve:do",
    );
    expect(await stockOf("SKU-RARE")).toBe(0);
    const released = await post(`${sim.url}/inventory/release`, { orderId: "O-3" }, "O-3:reserve:undo");
    expect(released.body).toMatchObject({ undone: [expect.stringMatching(/^RES-/)], noop: false });
    expect(await stockOf("SKU-RARE")).toBe(3);
  });
});

describe("payment", () => {
  it("charges up to the limit and refunds", async () => {
    const charged = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-4", amount: 500, currency: "EUR" },
      "O-4:charge:do",
    );
    expect(charged.status).toBe(200);
    expect(charged.body).toMatchObject({
      chargeId: expect.stringMatching(/^CHG-/),
      amount: 500,
      currency: "EUR",
    });

    const refunded = await post(
      `${sim.url}/payment/refund`,
      { orderId: "O-4", chargeId: charged.body.chargeId },
      "O-4:charge:undo",
    );
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({
      refundId: expect.stringMatching(/^REF-/),
      undone: [charged.body.chargeId],
      noop: false,
    });
  });

  it("declines a charge above the limit with 402 PaymentDeclined", async () => {
    const declined = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-5", amount: 500.01, currency: "EUR" },
      "O-5:charge:do",
    );
    expect(declined.status).toBe(402);
    expect(declined.body).toMatchObject({ code: "PaymentDeclined", limit: 500 });
    expect(await ledger(sim)).toMatchObject([
      { operation: "charge", applied: false, effect: { refused: "PaymentDeclined" } },
    ]);
  });

  it("refuses an undo naming an id that is not the order's with 404", async () => {
    await post(`${sim.url}/payment/charge`, { orderId: "O-7", amount: 10, currency: "EUR" }, "O-7:charge:do");
    const wrong = await post(
      `${sim.url}/payment/refund`,
      { orderId: "O-7", chargeId: "CHG-999999" },
      "O-7:charge:undo",
    );
    expect(wrong.status).toBe(404);
    expect(wrong.body.code).toBe("NotFound");
  });
});

describe("shipping", () => {
  it("books and cancels a shipment", async () => {
    const booked = await post(`${sim.url}/shipping/book`, { orderId: "O-6", address }, "O-6:ship:do");
    expect(booked.status).toBe(200);
    expect(booked.body).toMatchObject({ orderId: "O-6", trackingNumber: expect.stringMatching(/^TRK-/) });
    const cancelled = await post(
      `${sim.url}/shipping/cancel`,
      { orderId: "O-6", trackingNumber: booked.body.trackingNumber },
      "O-6:ship:undo",
    );
    expect(cancelled.body).toEqual({ orderId: "O-6", undone: [booked.body.trackingNumber], noop: false });
  });
});

describe("idempotency", () => {
  it("applies a repeated key once and returns the first response to every repeat", async () => {
    const body = { orderId: "O-8", items: [{ sku: "SKU-1", quantity: 5 }] };
    const first = await post(`${sim.url}/inventory/reserve`, body, "O-8:reserve:do");
    const again = await post(`${sim.url}/inventory/reserve`, body, "O-8:reserve:do");
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await stockOf("SKU-1")).toBe(995);
    expect(await ledger(sim)).toMatchObject([
      { idempotencyKey: "O-8:reserve:do", requests: 2, applied: true },
    ]);
  });

  it("applies once when 20 requests with the same key arrive together", async () => {
    const body = { orderId: "O-9", items: [{ sku: "SKU-9", quantity: 7 }] };
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => post(`${sim.url}/inventory/reserve`, body, "O-9:reserve:do")),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => r.body.reservationId)).size).toBe(1);
    expect(await stockOf("SKU-9")).toBe(993);
    expect(await ledger(sim)).toMatchObject([{ requests: 20, applied: true }]);
  });

  it("replays a refusal too, and treats reordered keys of the same body as the same request", async () => {
    const first = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-10", amount: 900, currency: "EUR" },
      "O-10:charge:do",
    );
    const again = await post(
      `${sim.url}/payment/charge`,
      { currency: "EUR", amount: 900, orderId: "O-10" },
      "O-10:charge:do",
    );
    expect([first.status, again.status]).toEqual([402, 402]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await ledger(sim)).toMatchObject([{ requests: 2, applied: false }]);
  });

  it("refuses the same key with a different body or on another route with 422 IdempotencyKeyReuse", async () => {
    await post(`${sim.url}/payment/charge`, { orderId: "O-11", amount: 10, currency: "EUR" }, "K-11");
    const otherBody = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-11", amount: 11, currency: "EUR" },
      "K-11",
    );
    const otherRoute = await post(
      `${sim.url}/inventory/reserve`,
      { orderId: "O-11", items: [{ sku: "SKU-1", quantity: 1 }] },
      "K-11",
    );
    for (const r of [otherBody, otherRoute]) {
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("IdempotencyKeyReuse");
    }
    expect(await ledger(sim)).toMatchObject([
      { idempotencyKey: "K-11", requests: 1, effect: { amount: 10 } },
    ]);
  });
});

describe("closed orders (tombstones)", () => {
  it("answers an undo with no do as a no-op and then refuses a late do with 409 AlreadyCompensated", async () => {
    const refund = await post(`${sim.url}/payment/refund`, { orderId: "O-12" }, "O-12:charge:undo");
    expect(refund.status).toBe(200);
    expect(refund.body).toEqual({ orderId: "O-12", refundId: null, undone: [], noop: true });

    const late = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-12", amount: 10, currency: "EUR" },
      "O-12:charge:do",
    );
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("AlreadyCompensated");
    expect(await ledger(sim)).toMatchObject([
      { operation: "refund", applied: false, status: 200, effect: { tombstone: true, noop: true } },
      { operation: "charge", applied: false, status: 409, effect: { refused: "AlreadyCompensated" } },
    ]);
  });

  it("closes an order on one service only, and also after an undo that reversed something", async () => {
    const items = [{ sku: "SKU-1", quantity: 1 }];
    await post(`${sim.url}/inventory/reserve`, { orderId: "O-13", items }, "O-13:reserve:do");
    await post(`${sim.url}/inventory/release`, { orderId: "O-13" }, "O-13:reserve:undo");
    const again = await post(`${sim.url}/inventory/reserve`, { orderId: "O-13", items }, "O-13:reserve:do:2");
    expect(again.status).toBe(409);
    const charge = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-13", amount: 10, currency: "EUR" },
      "O-13:charge:do",
    );
    expect(charge.status).toBe(200);
  });
});

describe("ledger", () => {
  it("lists every effect in application order, and DELETE /_ledger resets ledger, stock, closed orders and faults", async () => {
    await post(
      `${sim.url}/inventory/reserve`,
      { orderId: "O-14", items: [{ sku: "SKU-RARE", quantity: 1 }] },
      "a",
    );
    await post(`${sim.url}/payment/charge`, { orderId: "O-14", amount: 1, currency: "EUR" }, "b");
    await post(`${sim.url}/payment/refund`, { orderId: "O-14" }, "c");
    await post(`${sim.url}/faults-do-not-exist`, {}, "d");
    expect((await post(`${sim.url}/_faults`, { service: "payment", kind: "transient" })).status).toBe(201);

    const entries = await ledger(sim);
    expect(entries.map((e) => `${e.service}/${e.operation} ${e.idempotencyKey} ${e.orderId}`)).toEqual([
      "inventory/reserve a O-14",
      "payment/charge b O-14",
      "payment/refund c O-14",
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ requests: 1, applied: true, status: 200 });
      expect(Date.parse(e.firstAt)).not.toBeNaN();
    }

    expect((await call(`${sim.url}/_ledger`, "DELETE")).status).toBe(204);
    expect(await ledger(sim)).toEqual([]);
    expect(await stockOf("SKU-RARE")).toBe(3);
    expect((await call(`${sim.url}/_faults`, "GET")).body.faults).toEqual([]);
    const charge = await post(
      `${sim.url}/payment/charge`,
      { orderId: "O-14", amount: 1, currency: "EUR" },
      "b",
    );
    expect(charge.status).toBe(200);
    expect(charge.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("bad requests", () => {
  it("requires the Idempotency-Key header", async () => {
    const r = await post(`${sim.url}/payment/charge`, { orderId: "O", amount: 1, currency: "EUR" });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: "BadRequest", message: expect.stringContaining("Idempotency-Key") });
  });

  it.each([
    ["inventory/reserve", { orderId: "O", items: [{ sku: "S", quantity: "2" }] }, "items.0.quantity"],
    ["inventory/reserve", { orderId: "O", items: [] }, "items"],
    ["inventory/release", { reservationId: "RES-1" }, "orderId"],
    ["payment/charge", { orderId: "O", amount: -1, currency: "EUR" }, "amount"],
    ["payment/charge", { orderId: "O", amount: 1, currency: "eur" }, "currency"],
    ["payment/refund", { orderId: "" }, "orderId"],
    ["shipping/book", { orderId: "O", address: { ...address, country: "Germany" } }, "address.country"],
    ["inventory/release", [], "body"],
  ])("POST /%s with %j gets 400 naming %s", async (path, body, field) => {
    const r = await post(`${sim.url}/${path}`, body, "bad");
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("BadRequest");
    expect(r.body.message).toMatch(new RegExp(`(^|; )${field.replaceAll(".", "\\.")}: `));
    expect(await ledger(sim)).toEqual([]);
  });

  it("rejects a body that is not JSON", async () => {
    const r = await post(`${sim.url}/payment/charge`, "{orderId:", "k", { raw: true });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^body: expected JSON/);
  });

  it("refuses a body over 64 KiB with 413", async () => {
    const r = await post(`${sim.url}/payment/refund`, { orderId: "O", pad: "x".repeat(70_000) }, "big");
    expect(r.status).toBe(413);
    expect(r.body.code).toBe("PayloadTooLarge");
  });

  it("answers 404 to an unknown route or method", async () => {
    expect((await post(`${sim.url}/payment/steal`, {}, "k")).status).toBe(404);
    expect((await call(`${sim.url}/payment/charge`, "GET")).status).toBe(404);
    expect((await call(`${sim.url}/_faults/F-404`, "DELETE")).status).toBe(404);
  });
});
