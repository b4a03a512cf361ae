import type { HttpRequest } from "@azure/functions";
import { z } from "zod";
import { isoTimestamp, ORDER_ID_PATTERN, ORDER_ID_RULE, processStateSchema, quoteValue } from "../domain";
import type { ListPosition } from "../store/stateStore";
import type { ProcessState } from "../domain";

/** A parameter read from a route or a query string: its value, or the 400 message that names the problem. */
export type Param<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * The `{orderId}` of a route, checked like the orderId of a submission before it reaches a store call or a durable
 * id. A `/`, `\`, `#`, `%2F` or a control character in it is a 400 that says so, never a lookup.
 */
export function routeOrderId(request: HttpRequest): Param<string> {
  const value = request.params.orderId ?? "";
  if (ORDER_ID_PATTERN.test(value)) return { ok: true, value };
  return { ok: false, error: `orderId (in the path): expected ${ORDER_ID_RULE}, got ${quoteValue(value)}` };
}

export function stateFilter(request: HttpRequest): Param<ProcessState | undefined> {
  const raw = request.query.get("state");
  if (raw === null) return { ok: true, value: undefined };
  const parsed = processStateSchema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    error: `state: expected one of ${processStateSchema.options.join(", ")}, got ${quoteValue(raw)}`,
  };
}

export const LIST_LIMIT = { default: 50, max: 100 } as const;

export function listLimit(request: HttpRequest): Param<number> {
  const raw = request.query.get("limit") ?? String(LIST_LIMIT.default);
  const limit = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (limit >= 1 && limit <= LIST_LIMIT.max) return { ok: true, value: limit };
  return {
    ok: false,
    error: `limit: expected a whole number from 1 to ${LIST_LIMIT.max}, got ${quoteValue(raw)}`,
  };
}

/**
 * The `continuation` of a listing: the position after which the next page starts, as the previous page gave it.
 * It is base64url JSON of that position and nothing else, so a token that does not decode to one (garbage, cut
 * short, edited) is a 400; it is never passed to the store as a cursor and never read as "start again".
 */
const positionSchema = z.strictObject({
  updatedAt: isoTimestamp,
  orderId: z.string().regex(ORDER_ID_PATTERN),
});

/** The alphabet and length of a continuation token: base64url of a short JSON position. */
export const CONTINUATION_PATTERN = /^[A-Za-z0-9_-]{1,400}$/;

export function encodeContinuation(position: ListPosition): string {
  return Buffer.from(JSON.stringify({ updatedAt: position.updatedAt, orderId: position.orderId })).toString(
    "base64url",
  );
}

export function continuationParam(request: HttpRequest): Param<ListPosition | undefined> {
  const raw = request.query.get("continuation");
  if (raw === null) return { ok: true, value: undefined };
  const position = decodeContinuation(raw);
  return position.ok ? position : { ok: false, error: `continuation: ${position.error}` };
}

/**
 * A continuation token back into the position it encodes, wherever it travels (a query string, a JSON body); the
 * error names no field, for the caller to prefix with where the token was.
 */
export function decodeContinuation(raw: string): Param<ListPosition> {
  const refused: Param<never> = {
    ok: false,
    error: `expected the continuation of a previous page of this listing, got ${quoteValue(raw, 40)}`,
  };
  if (!CONTINUATION_PATTERN.test(raw)) return refused;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    return refused;
  }
  const position = positionSchema.safeParse(decoded);
  // Re-encoding must give the same text: no trailing bytes, no second spelling of one position.
  if (!position.success || encodeContinuation(position.data) !== raw) return refused;
  return { ok: true, value: position.data };
}
