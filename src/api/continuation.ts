/**
 * The continuation tokens of the listings (GET /api/orders, the bulk actions): the position after which the next
 * page starts, signed by this API so that a token it did not give (edited, cut short, made by hand) is a 400, never
 * a cursor into the store and never read as "start again".
 *
 * A token is `<position>.<signature>`: the base64url of the position's JSON, `{"updatedAt":...,"orderId":...}`,
 * then the base64url HMAC-SHA256 of that text under PAGING_TOKEN_KEY. Clients treat it as opaque. It hides nothing
 * (the position is the last record of the page the caller was shown); the signature only says who made it. Any
 * instance reads another's tokens, and a restarted one its own, because the key is a setting; after a rotation the
 * previous key is still read, so pages in flight carry on.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { PagingKeys } from "../config";
import { isoTimestamp, ORDER_ID_PATTERN, quoteValue } from "../domain";
import type { ListPosition } from "../store/stateStore";
import type { Param } from "./param";

const positionSchema = z.strictObject({
  updatedAt: isoTimestamp,
  orderId: z.string().regex(ORDER_ID_PATTERN),
});

/** Characters of an HMAC-SHA256 in base64url: 32 bytes, unpadded. */
const SIGNATURE_LENGTH = 43;

/** The alphabet and length of a token: a short base64url position, a dot, its signature. */
export const CONTINUATION_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,400}\\.[A-Za-z0-9_-]{${SIGNATURE_LENGTH}}$`);

/** Base64url with no dot: a position without a signature, such as one made by hand. */
const UNSIGNED = /^[A-Za-z0-9_-]+$/;

const sign = (key: string, position: string): string =>
  createHmac("sha256", key).update(position).digest("base64url");

export function issueContinuation(position: ListPosition, keys: PagingKeys): string {
  const text = Buffer.from(
    JSON.stringify({ updatedAt: position.updatedAt, orderId: position.orderId }),
  ).toString("base64url");
  return `${text}.${sign(keys.current, text)}`;
}

/** Whether `signature` is what one of the keys gives `position`, compared in constant time. */
function signedHere(position: string, signature: string, keys: PagingKeys): boolean {
  const given = Buffer.from(signature);
  return [keys.current, keys.previous].some((key) => {
    if (key === null) return false;
    const expected = Buffer.from(sign(key, position));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

/**
 * A token back into its position, wherever it travels (a query string, a JSON body), or why not; the error names no
 * field, for the caller to prefix with where the token was.
 */
export function readContinuation(raw: string, keys: PagingKeys): Param<ListPosition> {
  const refused = (why: string): Param<never> => ({
    ok: false,
    error: `expected the continuation of a previous page of this listing, got ${quoteValue(raw, 40)}: ${why}`,
  });
  if (!CONTINUATION_PATTERN.test(raw)) {
    return UNSIGNED.test(raw)
      ? refused("not issued by this API (it carries no signature)")
      : refused("malformed (expected <position>.<signature>, both base64url)");
  }
  const [position = "", signature = ""] = raw.split(".");
  if (!signedHere(position, signature, keys)) {
    return refused("not issued by this API (its signature does not match)");
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(position, "base64url").toString("utf8"));
  } catch {
    return refused("malformed (its position is not JSON)");
  }
  // Signed, so written by issueContinuation under one of the keys: only a key used elsewhere gets here.
  const parsed = positionSchema.safeParse(decoded);
  if (!parsed.success) return refused("malformed (its position is not one this API writes)");
  return { ok: true, value: parsed.data };
}
