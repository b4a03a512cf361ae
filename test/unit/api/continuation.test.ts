/**
 * Continuation tokens: issued signed, read back only when this API signed them under its current or previous key,
 * and every other token refused with the reason, never read as a position.
 */
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONTINUATION_PATTERN, issueContinuation, readContinuation } from "../../../src/api/continuation";
import type { PagingKeys } from "../../../src/config";

const OLD = "the-key-before-the-rotation-0123456789";
const NEW = "the-key-after-the-rotation-9876543210";
const keys: PagingKeys = { current: NEW, previous: null };
const rotated: PagingKeys = { current: NEW, previous: OLD };

const position = { updatedAt: "2025-03-01T10:00:00.000Z", orderId: "ORD-7" };
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
/** A signature made the way the contract describes it, not by the code under test. */
const signed = (text: string, key: string) =>
  `${text}.${createHmac("sha256", key).update(text).digest("base64url")}`;

const refusal = (raw: string, given: PagingKeys = keys): string => {
  const read = readContinuation(raw, given);
  if (read.ok) throw new Error(`expected ${raw} to be refused`);
  return read.error;
};
const NOT_SIGNED_HERE = /: not issued by this API \(its signature does not match\)$/;

describe("continuation tokens", () => {
  it("are the base64url JSON of the position, a dot, and its HMAC-SHA256 under the current key", () => {
    const token = issueContinuation(position, rotated);
    expect(token).toMatch(CONTINUATION_PATTERN);
    expect(token).toBe(signed(encode(position), NEW));
    expect(readContinuation(token, rotated)).toEqual({ ok: true, value: position });
  });

  it("keep only the position, whatever else the record passed in holds", () => {
    const record = { ...position, processState: "Error" };
    const token = issueContinuation(record, keys);
    expect(token.split(".")[0]).toBe(encode(position));
  });

  it("refuse an edited position: the signature no longer matches", () => {
    const [, signature] = issueContinuation(position, keys).split(".");
    for (const edited of [
      { ...position, orderId: "ORD-8" },
      { ...position, updatedAt: "2030-01-01T00:00:00.000Z" },
    ]) {
      expect(refusal(`${encode(edited)}.${signature}`)).toMatch(NOT_SIGNED_HERE);
    }
  });

  it("refuse a token signed with another key, or a hand-made one with no signature", () => {
    expect(refusal(signed(encode(position), "someone-else's-key-of-enough-length"))).toMatch(NOT_SIGNED_HERE);
    expect(refusal(issueContinuation(position, { current: OLD, previous: null }))).toMatch(NOT_SIGNED_HERE);
    expect(refusal(encode(position))).toMatch(/: not issued by this API \(it carries no signature\)$/);
  });

  it("read tokens of the previous key after a rotation, and only while it is set", () => {
    const beforeRotation = issueContinuation(position, { current: OLD, previous: null });
    expect(readContinuation(beforeRotation, rotated)).toEqual({ ok: true, value: position });
    expect(refusal(beforeRotation, keys)).toMatch(NOT_SIGNED_HERE);
    // New tokens are signed with the current key alone: they outlive the previous one.
    expect(readContinuation(issueContinuation(position, rotated), keys)).toEqual({
      ok: true,
      value: position,
    });
  });

  it("refuse a truncated token, garbage and an empty one as malformed", () => {
    const token = issueContinuation(position, keys);
    const malformed = /: malformed \(expected <position>\.<signature>, both base64url\)$/;
    for (const raw of [
      token.slice(0, -4),
      `${token}A`,
      `${token}.x`,
      "!!!not-a-token!!!",
      "",
      ".",
      `a.${"-".repeat(44)}`,
    ]) {
      expect(refusal(raw), raw).toMatch(malformed);
    }
    // Cut at the dot: a position alone.
    expect(refusal(token.split(".")[0]!)).toMatch(/it carries no signature/);
  });

  it("refuse a signed text that is not a position this API writes", () => {
    for (const text of [
      Buffer.from("hello").toString("base64url"),
      encode({ ...position, skip: 1000 }),
      encode([position]),
    ]) {
      expect(refusal(signed(text, NEW))).toMatch(
        /: malformed \(its position is (not JSON|not one this API writes)\)$/,
      );
    }
  });

  it("say which token they refused, bounded, and nothing of the keys", () => {
    const long = `${"A".repeat(300)}.${"B".repeat(43)}`;
    const error = refusal(long, rotated);
    expect(error).toMatch(
      /^expected the continuation of a previous page of this listing, got "A{40}"\.\.\. \(344 characters\): /,
    );
    expect(error).not.toContain(NEW);
    expect(error).not.toContain(OLD);
  });

  it("refuse any token with one character changed", () => {
    const token = issueContinuation(position, rotated);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...alphabet), (at, replacement) => {
        fc.pre(token[at] !== replacement);
        const changed = token.slice(0, at) + replacement + token.slice(at + 1);
        expect(readContinuation(changed, rotated).ok).toBe(false);
      }),
    );
  });
});
