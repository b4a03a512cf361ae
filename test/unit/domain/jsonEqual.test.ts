// jsonEqual answers what comparing the canonical JSON of two values answers, without writing either out.
import { describe, expect, it } from "vitest";
import { jsonEqual } from "../../../src/domain/jsonEqual";
import { canonicalJson } from "../../../src/domain/order";

const body = {
  orderId: "ORD-1",
  amount: 12.5,
  lines: [
    { sku: "A", quantity: 1 },
    { sku: "B", quantity: 2, note: null },
  ],
  ship: { to: "x", express: false },
};

const pairs: Array<[string, unknown, unknown]> = [
  ["the same object", body, body],
  ["a copy", body, JSON.parse(JSON.stringify(body))],
  [
    "keys in another order",
    body,
    { ship: { express: false, to: "x" }, lines: body.lines, amount: 12.5, orderId: "ORD-1" },
  ],
  ["a key set to undefined, against none", { a: 1, b: undefined }, { a: 1 }],
  ["a number changed", body, { ...body, amount: 12.51 }],
  ["a number against its text", { a: 1 }, { a: "1" }],
  ["null against absent", { a: null }, {}],
  ["null against an object", null, {}],
  ["an array against an object with its indexes", [1, 2], { 0: 1, 1: 2 }],
  ["arrays in another order", [1, 2], [2, 1]],
  ["a longer array", [1, 2], [1, 2, 3]],
  ["an extra key", { a: 1 }, { a: 1, b: 2 }],
  ["a missing key with an extra one", { a: 1, b: 2 }, { a: 1, c: 2 }],
  ["a nested change", body, { ...body, lines: [body.lines[0], { ...body.lines[1], quantity: 3 }] }],
  ["false against 0", false, 0],
  ["empty object against empty array", {}, []],
  ["texts", "x", "x"],
];

describe("jsonEqual", () => {
  it.each(pairs)("agrees with canonical JSON: %s", (_what, a, b) => {
    const expected = canonicalJson(a) === canonicalJson(b);
    expect(jsonEqual(a, b)).toBe(expected);
    expect(jsonEqual(b, a)).toBe(expected);
  });

  it("tells equal and different documents apart", () => {
    expect(jsonEqual(body, JSON.parse(JSON.stringify(body)))).toBe(true);
    expect(jsonEqual(body, { ...body, amount: 13 })).toBe(false);
  });
});
