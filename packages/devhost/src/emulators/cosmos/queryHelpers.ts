/**
 * Two of @zeit/cosmosdb-query's runtime helpers (lib/helpers.js), which its generated code calls as `$h.paginate`
 * and `$h.stripUndefined`, with the same results in linear time. The engine's `stripUndefined` builds an array
 * with `reduce((o, v) => [...o, v], [])`, copying it once per element, and `paginate` applies it to the whole
 * page: a page without a page size (`fetchAll()` of @azure/cosmos sends none, so the server answers everything
 * in one page) of n documents cost O(n²), 4 s for 20,000. `paginate` is the engine's line for line otherwise:
 * the continuation token, its RID/RT/SRC/TRC/RTD fields and where a page resumes are unchanged. Every other
 * helper is the engine's own.
 */
import * as continuationToken from "@zeit/cosmosdb-query/lib/continuation-token";
import * as helpers from "@zeit/cosmosdb-query/lib/helpers";

const TYPE_ORDERS = ["undefined", "null", "boolean", "number", "string", "array", "object"];

const typeOf = (v: unknown): string => {
  const t = typeof v;
  if (t !== "object") return t;
  if (v === null) return "null";
  return Array.isArray(v) ? "array" : t;
};

/** The engine's comparator: by type in TYPE_ORDERS order, then by value; objects are equal. */
const comparator = (a: unknown, b: unknown): number => {
  if (a === b) return 0;
  const aType = typeOf(a);
  const bType = typeOf(b);
  if (aType === bType) {
    if (aType === "object") return 0;
    return (a as number) < (b as number) ? -1 : 1;
  }
  for (const type of TYPE_ORDERS) {
    if (aType === type) return -1;
    if (bType === type) return 1;
  }
  return 0;
};

const getValue = (doc: unknown, [key, ...keys]: readonly string[]): unknown => {
  const value = typeof doc === "object" && doc ? (doc as Record<string, unknown>)[key as string] : undefined;
  if (keys.length && typeof value !== "undefined") return getValue(value, keys);
  return value;
};

/** The engine's stripUndefined: `undefined` leaves arrays (holes too) and objects, recursively. */
export function stripUndefined(obj: unknown): unknown {
  if (Array.isArray(obj)) {
    const kept: unknown[] = [];
    obj.forEach((v: unknown) => {
      if (typeof v !== "undefined") kept.push(stripUndefined(v));
    });
    return kept;
  }
  if (obj && typeof obj === "object") {
    return Object.entries(obj).reduce<Record<string, unknown>>((o, [k, v]) => {
      if (typeof v !== "undefined") o[k] = stripUndefined(v);
      return o;
    }, {});
  }
  return obj;
}

type Row = [unknown, unknown];
type Order = [string[], boolean];

/** The engine's paginate, over stripUndefined above. */
export function paginate(
  collection: Row[],
  maxItemCount: number | null | undefined,
  continuation: { token: string } | null | undefined,
  getRid: (row: unknown) => unknown,
  ...orders: Order[]
): { result: unknown; continuation: { token: string; range: { min: string; max: string } } | null } {
  let result = collection;
  let token: continuationToken.Token | undefined;
  let offset = 0;
  if (continuation) {
    const decoded = continuationToken.decode(continuation.token);
    token = decoded;
    let src = 0;
    let index = result.findIndex(([, d]) => {
      if (typeof decoded.RTD !== "undefined" && orders.length) {
        for (let i = 0, l = orders.length; i < l; i += 1) {
          const [keys, desc] = orders[i]!;
          const rtd = getValue(d, keys);
          const r = comparator(rtd, decoded.RTD[i]) * (desc ? -1 : 1);
          if (r < 0) return false;
          if (r > 0) return true;
        }
      }
      const rid = getRid(d);
      if (!rid) {
        throw new Error("The _rid field is required on items for the continuation option.");
      }
      if (comparator(rid, decoded.RID) < 0) return false;
      if (!decoded.SRC || rid !== decoded.RID) return true;
      if (src === decoded.SRC) return true;
      src += 1;
      return false;
    });
    index = index >= 0 ? index : result.length;
    result = result.slice(index);
    offset += index;
  }
  let nextContinuation: { token: string; range: { min: string; max: string } } | null = null;
  if ((maxItemCount as number) > 0) {
    const pageSize = maxItemCount as number;
    if (result.length > pageSize) {
      const [, item] = result[pageSize]!;
      const RID = getRid(item) as string;
      if (!RID) {
        throw new Error("The _rid field is required on items for the maxItemCount option.");
      }
      const RT = (token ? token.RT : 0) + 1;
      const TRC = (token ? token.TRC : 0) + pageSize;
      const RTD = orders.length ? orders.map(([keys]) => getValue(item, keys)) : undefined;
      // calculate "SRC" which is the offset of items with the same `_rid`;
      let j = offset + pageSize - 1;
      for (; j >= 0; j -= 1) {
        if (getRid(collection[j]![1]) !== RID) break;
      }
      const SRC = offset + pageSize - j - 1;
      const nextToken = continuationToken.encode({ RID, RT, SRC, TRC, RTD });
      nextContinuation = { token: nextToken, range: { min: "", max: "FF" } };
    }
    result = result.slice(0, pageSize);
  }
  return { result: stripUndefined(result.map(([r]) => r)), continuation: nextContinuation };
}

/** The helpers the generated code runs with: the engine's, with the two above in place of its own. */
export const QUERY_HELPERS: typeof helpers = { ...helpers, stripUndefined, paginate } as typeof helpers;
