import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  capText,
  escapeText,
  hasControlCharacters,
  MAX_REASON_LENGTH,
  quoteValue,
  validate,
  validateBody,
} from "../../../src/domain";
import { RAW_CONTROL } from "../../support/text";

const LONE_SURROGATE = /\p{Surrogate}/u;

describe("control characters", () => {
  it.each([
    ["a newline", "a\nb"],
    ["a carriage return", "a\rb"],
    ["DEL", "a\u007fb"],
    ["NEL (C1)", "a\u0085b"],
    ["CSI (C1)", "a\u009b31mb"],
    ["the line separator", "a\u2028b"],
    ["the paragraph separator", "a\u2029b"],
    ["a right-to-left override", "a\u202eb"],
    ["a first-strong isolate", "a\u2068b"],
  ])("finds %s", (_name, text) => {
    expect(hasControlCharacters(text)).toBe(true);
  });

  it("finds none in text people write", () => {
    for (const text of [
      "Müller, café ✓",
      "日本語の理由",
      "emoji 🚚 ok",
      'tab-free; quotes " and \\ ok',
      "שלום",
    ])
      expect(hasControlCharacters(text), text).toBe(false);
  });
});

/** Any UTF-16 code unit, lone surrogates included, with the troublesome ones often. */
const codeUnit = fc.oneof(
  fc.constantFrom("\n", "\r", "\u0085", "\u2028", "\u202e", "\ud83d", "\ude9a", "\\", "u", "a"),
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
);

describe("escapeText", () => {
  it("writes control characters as their JSON escapes and leaves the rest as it is", () => {
    expect(escapeText("a\nb\rc\td")).toBe("a\\nb\\rc\\td");
    expect(escapeText("\u0000\u001b[31m\u007f")).toBe("\\u0000\\u001b[31m\\u007f");
    expect(escapeText("x\u0085y\u009bz")).toBe("x\\u0085y\\u009bz");
    expect(escapeText("x\u2028y\u2029z\u202ew\u2066v")).toBe("x\\u2028y\\u2029z\\u202ew\\u2066v");
    expect(escapeText("lone \ud800 half")).toBe("lone \\ud800 half");
    expect(escapeText('Müller "🚚" \\n')).toBe('Müller "🚚" \\n');
  });

  it("leaves no raw control character and changes nothing the second time, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ unit: codeUnit }), (text) => {
        const escaped = escapeText(text);
        expect(escaped).not.toMatch(RAW_CONTROL);
        expect(escaped).not.toMatch(LONE_SURROGATE);
        expect(escapeText(escaped)).toBe(escaped);
      }),
    );
  });

  it("quotes a value escaped, C1 and separators included", () => {
    expect(quoteValue("a\u0085b\u2028c\nd")).toBe('"a\\u0085b\\u2028c\\nd"');
  });

  it("does not cut a character in two when shortening", () => {
    const text = "🚚".repeat(100);
    const capped = capText(text, 41);
    expect(capped).not.toMatch(LONE_SURROGATE);
    expect(capped.length).toBeLessThanOrEqual(41);
  });
});

describe("refusals of hostile field names", () => {
  const forged = "\n[alert] ALERT Error order=ORD-1 state=Error: payment failed";
  const schema = z.strictObject({ name: z.string(), tags: z.record(z.string(), z.number()) });

  it.each([
    ["\\n", "\n"],
    ["\\r", "\r"],
    ["\\u2028", "\u2028"],
    ["\\u0085", "\u0085"],
  ])("keep a reason on one line when a key holds %s", (escaped, raw) => {
    const key = `a${raw}${forged}`;
    const result = validateBody(schema, { name: "x", tags: { [key]: "NaN" }, [key]: 1 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).not.toMatch(RAW_CONTROL);
    // Both the record key in the path and the unknown key in zod's message are there, escaped.
    expect(result.message).toContain(`tags.a${escaped}`);
    expect(result.message).toContain(`a${escaped}`);
    for (const issue of result.issues) {
      expect(issue.path).not.toMatch(RAW_CONTROL);
      expect(issue.message).not.toMatch(RAW_CONTROL);
    }
  });

  it("bound a reason that names thousands of hostile keys", () => {
    const body = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, i) => [`k${i}\u2028${"x".repeat(50)}`, i]),
    );
    const result = validate(schema, { name: "x", tags: {}, ...body });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
    expect(result.message).not.toMatch(RAW_CONTROL);
  });
});
