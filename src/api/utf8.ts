/**
 * Strict UTF-8 decoding of a request body. A lenient decoder (what `request.text()` uses) turns every byte that
 * is not UTF-8 into U+FFFD, so a Latin-1 "é" would be stored as "�" and the client told 202: the order kept would
 * not be the order sent. The platform's decoder decides what is valid; this module only says where it failed.
 */

export type Decoded = { ok: true; text: string } | { ok: false; offset: number };

/** Decodes with the WHATWG UTF-8 decoder, which drops a leading byte order mark (RFC 8259 lets a parser ignore it). */
const decode = (bytes: Uint8Array, stream = false): string =>
  new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream });

const decodes = (bytes: Uint8Array, stream: boolean): boolean => {
  try {
    decode(bytes, stream);
    return true;
  } catch {
    return false;
  }
};

/** Index of the lead byte of the sequence that ends at `end` (exclusive): continuation bytes are 10xxxxxx. */
function sequenceStart(bytes: Uint8Array, end: number): number {
  let i = end - 1;
  while (i > 0 && end - i < 4 && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}

/**
 * The text of `bytes`, or the offset of the first byte sequence that is not UTF-8 (for "caf\xE9 au lait" in
 * Latin-1, 3: where the "é" starts).
 */
export function decodeUtf8(bytes: Uint8Array): Decoded {
  try {
    return { ok: true, text: decode(bytes) };
  } catch {
    // Read as a stream, a prefix fails only once it holds a wrong byte (an unfinished sequence at its end waits
    // for more), so the shortest failing prefix is found by bisection; none fails when only the end is cut short.
    if (decodes(bytes, true)) return { ok: false, offset: sequenceStart(bytes, bytes.length) };
    let good = 0;
    let bad = bytes.length;
    while (bad - good > 1) {
      const mid = (good + bad) >>> 1;
      if (decodes(bytes.subarray(0, mid), true)) good = mid;
      else bad = mid;
    }
    // The wrong byte is bytes[bad - 1]. It may be one the decoder cannot start with (0xFF, a stray continuation),
    // or a byte that interrupts a sequence begun before it: then that sequence is where the problem starts.
    const before = bytes.subarray(0, bad - 1);
    return { ok: false, offset: decodes(before, false) ? bad - 1 : sequenceStart(bytes, bad - 1) };
  }
}
