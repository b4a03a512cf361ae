import type { HttpRequest } from "@azure/functions";
import type { PagingKeys } from "../config";
import { ORDER_ID_PATTERN, ORDER_ID_RULE, processStateSchema, quoteValue } from "../domain";
import type { ListPosition } from "../store/stateStore";
import type { ProcessState } from "../domain";
import { readContinuation } from "./continuation";
import type { Param } from "./param";

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
 * The `continuation` of a listing: the position after which the next page starts, as the previous page gave it. A
 * token this API did not sign (garbage, cut short, edited, made by hand) is a 400 (continuation.ts).
 */
export function continuationParam(request: HttpRequest, keys: PagingKeys): Param<ListPosition | undefined> {
  const raw = request.query.get("continuation");
  if (raw === null) return { ok: true, value: undefined };
  const position = readContinuation(raw, keys);
  return position.ok ? position : { ok: false, error: `continuation: ${position.error}` };
}
