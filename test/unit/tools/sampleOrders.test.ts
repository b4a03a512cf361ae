import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  SAMPLE_PAYMENT_LIMIT,
  defaultOrderPrefix,
  exceedsPaymentLimit,
  isDeclinedIndex,
  sampleOrder,
  sampleOrders,
} from "../../../tools/sampleOrders";
import { seededRandom } from "../../../tools/seededRandom";
import { DEFAULT_PAYMENT_LIMIT, DEFAULT_STOCK } from "../../../tools/simulator";
import { orderSchema, orderTotal } from "../../../src/domain/order";

describe("sample orders", () => {
  it("are valid orders for any seed, index and declined fraction", () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (seed, i, declined) => {
          const order = sampleOrder(i, { prefix: "P", random: seededRandom(seed), declined });
          expect(orderSchema.parse(order)).toEqual(order);
          expect(order.orderId).toBe(`P-${i}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("look like real orders: 1-3 catalogue lines, quantities 1-3, a currency matching the country", () => {
    const orders = sampleOrders(500, { prefix: "R", random: seededRandom(1) });
    const currencyOf: Record<string, string> = { DE: "EUR", FR: "EUR", NL: "EUR", GB: "GBP", US: "USD" };
    const priceOf = new Map<string, number>();
    for (const order of orders) {
      expect(order.items.length).toBeGreaterThanOrEqual(1);
      expect(order.items.length).toBeLessThanOrEqual(3);
      expect(new Set(order.items.map((item) => item.sku)).size).toBe(order.items.length);
      for (const item of order.items) {
        expect(item.sku).toMatch(/^SKU-([1-9]|1\d|20)$/);
        expect(item.quantity).toBeGreaterThanOrEqual(1);
        expect(item.quantity).toBeLessThanOrEqual(3);
        expect(Math.round(item.unitPrice * 100) / 100).toBe(item.unitPrice);
        // One price per SKU across orders, as in a catalogue.
        expect(priceOf.get(item.sku) ?? item.unitPrice).toBe(item.unitPrice);
        priceOf.set(item.sku, item.unitPrice);
      }
      expect(order.currency).toBe(currencyOf[order.shippingAddress.country]);
      expect(order.replyTo).toBe("status-demo");
      expect(exceedsPaymentLimit(order)).toBe(false);
    }
    // Variety, not one order repeated.
    expect(new Set(orders.map((o) => o.shippingAddress.country)).size).toBeGreaterThanOrEqual(4);
    expect(new Set(orders.map((o) => o.currency))).toEqual(new Set(["EUR", "GBP", "USD"]));
    expect(priceOf.size).toBe(20);
    expect(new Set(orders.map((o) => o.customerId)).size).toBeGreaterThan(100);
  });

  it("are the same for the same seed, and differ for another", () => {
    const a = sampleOrders(50, { prefix: "S", random: seededRandom(42) });
    const b = sampleOrders(50, { prefix: "S", random: seededRandom(42) });
    const c = sampleOrders(50, { prefix: "S", random: seededRandom(43) });
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it("have unique orderIds <prefix>-1 .. <prefix>-N", () => {
    const orders = sampleOrders(200, { prefix: "U" });
    expect(orders.map((o) => o.orderId)).toEqual(Array.from({ length: 200 }, (_, k) => `U-${k + 1}`));
  });

  it("take a time-based prefix by default, so runs in different seconds do not collide", () => {
    expect(defaultOrderPrefix(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678)))).toBe("ORD-20250102030405");
    const [order] = sampleOrders(1);
    expect(order?.orderId).toMatch(/^ORD-\d{14}-1$/);
  });

  it("make exactly floor(count * fraction) orders exceed the simulator's payment limit, evenly spread", () => {
    expect(SAMPLE_PAYMENT_LIMIT).toBe(DEFAULT_PAYMENT_LIMIT);
    const orders = sampleOrders(25, { prefix: "D", random: seededRandom(7), declined: 0.2 });
    const over = orders.filter((o) => orderTotal(o) > DEFAULT_PAYMENT_LIMIT).map((o) => o.orderId);
    expect(over).toEqual(["D-5", "D-10", "D-15", "D-20", "D-25"]);
    for (const [count, fraction] of [
      [100, 0.29],
      [10, 0.1],
      [7, 1],
      [7, 0],
      [1000, 0.333],
    ] as const) {
      const declined = sampleOrders(count, { prefix: "F", random: seededRandom(count), declined: fraction });
      expect(declined.filter((o) => exceedsPaymentLimit(o)).length).toBe(Math.floor(count * fraction + 1e-9));
    }
  });

  it("keep declined orders within the simulator's stock, so inventory succeeds and payment is what fails", () => {
    const orders = sampleOrders(300, { prefix: "K", random: seededRandom(3), declined: 1 });
    for (const order of orders) {
      expect(exceedsPaymentLimit(order)).toBe(true);
      for (const item of order.items) expect(item.quantity).toBeLessThanOrEqual(DEFAULT_STOCK / 10);
    }
  });

  it("spread declined indices evenly", () => {
    const declined = Array.from({ length: 10 }, (_, k) => isDeclinedIndex(k + 1, 0.5));
    expect(declined).toEqual([false, true, false, true, false, true, false, true, false, true]);
  });

  it("leave replyTo out when asked, and name another status queue when given", () => {
    expect(sampleOrder(1, { prefix: "N", replyTo: null })).not.toHaveProperty("replyTo");
    expect(sampleOrder(1, { prefix: "N", replyTo: "status-mine" }).replyTo).toBe("status-mine");
  });

  it("refuse a prefix that cannot make a valid orderId, naming it", () => {
    expect(() => sampleOrder(1, { prefix: "bad prefix" })).toThrow(/prefix "bad prefix".*orderId/);
  });
});
