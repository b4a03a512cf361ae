import { describe, expect, it } from "vitest";
import {
  currencyDecimals,
  decimalPlaces,
  orderFingerprint,
  orderSchema,
  orderTotal,
  validate,
} from "../../../src/domain";
import { sampleOrder } from "../../support/domain";

describe("order schema", () => {
  it("accepts the example of docs/contract.md", () => {
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
    // Payment refuses 0; and an amount must be one a payment can be made of.
    [{ items: [{ sku: "A", quantity: 1, unitPrice: 0 }] }, "items.0.unitPrice"],
    [{ items: [{ sku: "A", quantity: 1, unitPrice: 1e308 }] }, "items.0.unitPrice"],
    [{ items: [{ sku: "A", quantity: 10_000, unitPrice: 1_000_000 }] }, "items.0"],
    [{ items: Array.from({ length: 11 }, () => ({ sku: "A", quantity: 1, unitPrice: 1_000_000 })) }, "items"],
    [{ currency: "JPY", items: [{ sku: "A", quantity: 1, unitPrice: 9.99 }] }, "items.0.unitPrice"],
    [{ items: "many" }, "items"],
    [{ items: [null] }, "items.0"],
    // Real codes, not only the right shape.
    [{ currency: "ZZZ" }, "currency"],
    [{ currency: "ABC" }, "currency"],
    [{ currency: "XXX" }, "currency"],
    [
      { shippingAddress: { line1: "x", city: "y", postalCode: "1", country: "ZZ" } },
      "shippingAddress.country",
    ],
    [
      { shippingAddress: { line1: "x", city: "y", postalCode: "1", country: "UK" } },
      "shippingAddress.country",
    ],
    [
      { shippingAddress: { line1: "x", city: "y", postalCode: "1", country: "EU" } },
      "shippingAddress.country",
    ],
  ])("names the bad field for %j", (override, path) => {
    const result = validate(orderSchema, { ...sampleOrder(), ...override });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.issues.map((i) => i.path)).toContain(path);
      expect(result.message).toMatch(new RegExp(`^${path.replace(/\./g, "\\.")}: expected`));
    }
  });

  it("says what range an amount must be in, not how many decimals it has", () => {
    const result = validate(
      orderSchema,
      sampleOrder({ items: [{ sku: "A", quantity: 1, unitPrice: 1e308 }] }),
    );
    expect(result.ok ? "accepted" : result.message).toBe(
      "items.0.unitPrice: expected an amount from 0.01 to 1000000",
    );
  });

  it("accepts real codes and amounts at the limits", () => {
    for (const [currency, country, unitPrice] of [
      ["EUR", "DE", 0.01],
      ["USD", "US", 1_000_000],
      ["JPY", "JP", 1500],
      ["GBP", "GB", 9.99],
      ["CHF", "CH", 10],
    ] as const) {
      const order = sampleOrder({
        currency,
        items: [{ sku: "A", quantity: 10, unitPrice }],
        shippingAddress: { line1: "x", city: "y", postalCode: "1", country },
      });
      const result = validate(orderSchema, order);
      expect(result.ok ? "accepted" : result.message, `${currency} ${country} ${unitPrice}`).toBe("accepted");
    }
  });

  it.each([1e-9, 0.009999999, 0.001, 1.5e-7, -0.01])(
    "refuses a unit price of %s, below a cent",
    (unitPrice) => {
      const result = validate(orderSchema, sampleOrder({ items: [{ sku: "A", quantity: 1, unitPrice }] }));
      expect(result.ok ? "accepted" : result.message).toBe(
        "items.0.unitPrice: expected an amount from 0.01 to 1000000",
      );
    },
  );

  it.each([9.999, 0.011, 1.0000001, 0.1 + 0.2, 999_999.999])(
    "refuses a unit price of %s, which is not in whole cents",
    (unitPrice) => {
      const result = validate(orderSchema, sampleOrder({ items: [{ sku: "A", quantity: 1, unitPrice }] }));
      expect(result.ok ? "accepted" : result.message).toBe(
        "items.0.unitPrice: expected at most two decimal places",
      );
    },
  );

  it("takes a price without a minor unit in whole units: 1 JPY and up", () => {
    for (const unitPrice of [0.01, 0.5, 1.5]) {
      const result = validate(
        orderSchema,
        sampleOrder({ currency: "JPY", items: [{ sku: "A", quantity: 1, unitPrice }] }),
      );
      expect(result.ok ? "accepted" : result.message, String(unitPrice)).toBe(
        "items.0.unitPrice: expected at most 0 decimal places for JPY",
      );
    }
    const one = validate(
      orderSchema,
      sampleOrder({ currency: "JPY", items: [{ sku: "A", quantity: 1, unitPrice: 1 }] }),
    );
    expect(one.ok).toBe(true);
  });

  it("refuses a withdrawn currency (HRK), naming the field, and accepts current ones", () => {
    const croatian = validate(orderSchema, sampleOrder({ currency: "HRK" }));
    expect(croatian.ok ? "accepted" : croatian.message).toBe(
      'currency: expected an ISO 4217 code of a currency in use, such as EUR, got "HRK"',
    );
    for (const currency of ["EUR", "JPY", "SLE", "ZWG", "VED", "XCG"]) {
      const result = validate(
        orderSchema,
        sampleOrder({ currency, items: [{ sku: "A", quantity: 1, unitPrice: 5 }] }),
      );
      expect(result.ok ? "accepted" : result.message, currency).toBe("accepted");
    }
  });

  it("keeps amounts in cents whatever the currency's minor unit", () => {
    expect(currencyDecimals("BHD")).toBe(2);
    expect(currencyDecimals("EUR")).toBe(2);
    expect(currencyDecimals("JPY")).toBe(0);
    expect(
      validate(
        orderSchema,
        sampleOrder({ currency: "BHD", items: [{ sku: "A", quantity: 1, unitPrice: 1.234 }] }),
      ).ok,
    ).toBe(false);
  });

  it("escapes what it quotes of a bad code", () => {
    const result = validate(orderSchema, sampleOrder({ currency: "E\u2028R\n" }));
    expect(result.ok ? "accepted" : result.message).toBe(
      'currency: expected an ISO 4217 code of a currency in use, such as EUR, got "E\\u2028R\\n"',
    );
  });

  it.each([
    ["\\n", "\n"],
    ["\\r", "\r"],
    ["\\u2028", "\u2028"],
    ["\\u0085", "\u0085"],
  ])("names an unknown field holding %s on one line, escaped", (escaped, raw) => {
    const key = `a${raw}[alert] ALERT Error order=ORD-1`;
    const result = validate(orderSchema, { ...sampleOrder(), [key]: 1 });
    expect(result.ok ? "accepted" : result.message).toBe(
      `(root): unknown field(s) a${escaped}[alert] ALERT Error order=ORD-1: expected only the fields of an order object`,
    );
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

describe("decimal places", () => {
  it("counts them as JSON writes the number, exponent forms included", () => {
    const table: Array<[number, number]> = [
      [9.99, 2],
      [10, 0],
      [1e21, 0],
      [0.1 + 0.2, 17],
      [1e-9, 9],
      [1.5e-7, 8],
      [0.009999999, 9],
      [-0.05, 2],
    ];
    for (const [n, places] of table) expect(decimalPlaces(n), String(n)).toBe(places);
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
