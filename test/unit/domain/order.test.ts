import { describe, expect, it } from "vitest";
import { orderFingerprint, orderSchema, orderTotal, validate } from "../../../src/domain";
import { sampleOrder } from "../../support/domain";

describe("order schema", () => {
  it("accepts the DESIGN §4 example", () => {
    expect(validate(orderSchema, sampleOrder()).ok).toBe(true);
  });

  it.each([
    [{ orderId: "" }, "orderId"],
    [{ orderId: "has space" }, "orderId"],
    [{ currency: "euro" }, "currency"],
    [{ items: [] }, "items"],
    [{ items: [{ sku: "A", quantity: 0, unitPrice: 1 }] }, "items.0.quantity"],
    [{ items: [{ sku: "A", quantity: 1.5, unitPrice: 1 }] }, "items.0.quantity"],
    [{ items: [{ sku: "A", quantity: 1, unitPrice: 1.234 }] }, "items.0.unitPrice"],
    [{ items: [{ sku: "A", quantity: 1, unitPrice: -1 }] }, "items.0.unitPrice"],
    [
      { shippingAddress: { line1: "x", city: "y", postalCode: "1", country: "Germany" } },
      "shippingAddress.country",
    ],
    [{ replyTo: "Status Queue" }, "replyTo"],
  ])("names the bad field for %j", (override, path) => {
    const result = validate(orderSchema, { ...sampleOrder(), ...override });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.issues.map((i) => i.path)).toContain(path);
      expect(result.message).toMatch(new RegExp(`^${path.replace(/\./g, "\\.")}: expected`));
    }
  });

  it("names a missing field and an unknown one", () => {
    const { customerId: _c, ...missing } = sampleOrder();
    const result = validate(orderSchema, { ...missing, discount: 5 });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      const paths = result.issues.map((i) => i.path);
      expect(paths).toContain("customerId");
      expect(result.message).toContain("discount");
    }
  });

  it("refuses a body that is not an object", () => {
    const result = validate(orderSchema, "ORD-1");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.path).toBe("(root)");
  });
});

describe("order fingerprint", () => {
  it("is the same whatever the key order and replyTo", () => {
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const a = sampleOrder();
    const b = reversed({ ...a, replyTo: "status-other" }) as typeof a;
    expect(JSON.stringify(b)).not.toBe(JSON.stringify(a));
    expect(orderFingerprint(b)).toBe(orderFingerprint(a));
  });

  it("changes with any immutable field", () => {
    const base = orderFingerprint(sampleOrder());
    expect(orderFingerprint(sampleOrder({ customerId: "C-43" }))).not.toBe(base);
    expect(
      orderFingerprint(sampleOrder({ items: [{ sku: "SKU-1", quantity: 3, unitPrice: 9.99 }] })),
    ).not.toBe(base);
    expect(orderFingerprint(sampleOrder({ currency: "USD" }))).not.toBe(base);
  });

  it("totals in cents without floating point drift", () => {
    expect(orderTotal(sampleOrder({ items: [{ sku: "A", quantity: 3, unitPrice: 0.1 }] }))).toBe(0.3);
  });
});
