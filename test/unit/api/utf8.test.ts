import { describe, expect, it } from "vitest";
import { decodeUtf8 } from "../../../src/api/utf8";

const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))));

describe("decodeUtf8", () => {
  it("decodes UTF-8, and drops a leading byte order mark", () => {
    expect(decodeUtf8(bytes('{"city":"Zürich 🚚"}'))).toEqual({ ok: true, text: '{"city":"Zürich 🚚"}' });
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], "{}"))).toEqual({ ok: true, text: "{}" });
    expect(decodeUtf8(bytes(""))).toEqual({ ok: true, text: "" });
  });

  it.each<[string, Uint8Array, number]>([
    ["a Latin-1 é", bytes("caf", [0xe9], " au lait"), 3],
    ["a Latin-1 é at the end", bytes("caf", [0xe9]), 3],
    ["a byte UTF-8 never has", bytes("ab", [0xff], "cd"), 2],
    ["a stray continuation byte", bytes("a", [0x80]), 1],
    ["an overlong encoding of '/'", bytes("x", [0xc0, 0xaf]), 1],
    ["an encoded surrogate", bytes("x", [0xed, 0xa0, 0x80]), 1],
    ["a sequence interrupted by ASCII", bytes("€", [0xe2, 0x82], "A"), 3],
    ["an emoji cut short at the end", bytes("ok ", [0xf0, 0x9f, 0x9a]), 3],
    ["a code point above U+10FFFF", bytes([0xf4, 0x90, 0x80, 0x80]), 0],
  ])("finds %s and says where it starts", (_name, body, offset) => {
    expect(decodeUtf8(body)).toEqual({ ok: false, offset });
  });
});
