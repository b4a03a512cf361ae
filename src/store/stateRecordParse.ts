/**
 * Reading a stored state record back into a typed one. Apart because every path that reads from the state
 * container (a point read, a write's 409 re-read, a query's page) checks what it got the same way.
 */
import { stateRecordSchema, type StateRecord } from "../domain";

export class CorruptRecordError extends Error {
  constructor(orderId: string, detail: string) {
    super(`state record ${orderId} does not match the schema: ${detail}`);
    this.name = "CorruptRecordError";
  }
}

export function parseStateRecord(raw: unknown, orderId: string): StateRecord {
  const parsed = stateRecordSchema.safeParse(raw);
  if (!parsed.success) throw new CorruptRecordError(orderId, parsed.error.issues[0]?.message ?? "invalid");
  return parsed.data;
}
