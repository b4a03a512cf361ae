/**
 * What the store keeps after a create or a replace: the document that was sent, plus the system properties it
 * adds (`_etag`, `_ts`, `_rid`, ...). What was sent is a typed value the app made, so only those properties are
 * taken from the store's answer: parsing the whole echo again with the document's schema cost more than the write.
 */
export function withSystemProperties<T extends object>(
  sent: T,
  resource: unknown,
  /** What was written, for the error: "state record ORD-1". */
  what: string,
): T & { _etag: string } {
  const system: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((resource ?? {}) as Record<string, unknown>))
    if (key.startsWith("_")) system[key] = value;
  if (typeof system._etag !== "string")
    throw new Error(`${what}: the store's answer to a write has no _etag`);
  return { ...sent, ...system } as T & { _etag: string };
}
