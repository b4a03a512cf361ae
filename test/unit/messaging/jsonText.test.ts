import { describe, expect, it } from "vitest";
import { jsonText } from "../../../src/messaging/jsonText";

/** `{"a":{"a":...{"a":1}...}}` nested `depth` deep, as text and as JSON.parse reads it. */
function nested(depth: number): { text: string; value: unknown } {
  const text = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  return { text, value: JSON.parse(text) as unknown };
}

describe("jsonText", () => {
  it("is JSON.stringify's text for ordinary values", () => {
    const value = {
      orderId: "A-1",
      items: [{ sku: "x", quantity: 2, price: 1.5 }, null, true],
      note: 'q"\n',
    };
    expect(jsonText(value)).toBe(JSON.stringify(value));
  });

  it("gives the text of a body nested 50,000 deep, which JSON.stringify overflows on", () => {
    const { text, value } = nested(50_000);
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(jsonText(value)).toBe(text);
  });

  it("nests arrays and objects alike, with keys escaped and empty containers kept", () => {
    let value: unknown = 0;
    for (let i = 0; i < 20_000; i++) value = [{ "k\n": [[], {}] }, value];
    expect(jsonText(value)).toBe('[{"k\\n":[[],{}]},'.repeat(20_000) + "0" + "]".repeat(20_000));
  });
});
