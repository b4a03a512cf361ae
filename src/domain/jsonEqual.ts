/**
 * Whether two JSON values are the same document, whatever the order of their objects' keys: what comparing their
 * canonical JSON (order.ts canonicalJson) tells, without writing either out. A key whose value is undefined counts
 * as absent, as JSON leaves it out. For values that came from JSON (a message, a record), which holds no Date,
 * NaN or function.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => jsonEqual(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let present = 0;
  for (const key of Object.keys(left)) {
    if (left[key] === undefined) continue;
    present++;
    if (!Object.prototype.hasOwnProperty.call(right, key) || !jsonEqual(left[key], right[key])) return false;
  }
  for (const key of Object.keys(right)) if (right[key] !== undefined) present--;
  return present === 0;
}
