/**
 * The cache of the state records this instance read or wrote last. Apart from the writes and the queries
 * because it is no store request at all: it only saves a read before the next conditional write, and the
 * rules that keep a stale copy harmless (a write from it is conditional; a refusal decided on it is decided
 * again on a fresh read) live with the writes that use it (stateWrites.ts).
 */
import type { StateRecord } from "../domain";

/**
 * Records this instance read or wrote last, kept to skip a read before the next write: about 2.5 KB each, so
 * a few MB at most.
 */
export const RECENT_RECORDS = 2_000;

/**
 * The version of each record this instance last read or wrote, with its etag, most recent last. An attempt's
 * activities, its reply router and the starter that claimed it mostly run in one instance, one after another,
 * so the next write can replace the version it knows instead of reading first. The copy may be stale (another
 * instance wrote since): a write from it is a conditional replace like any other, and on a 412 the record is
 * read and the decision taken again. A refusal or a no-op decided on a copy is checked again on a fresh read,
 * so a stale copy can never refuse what the current record allows.
 */
export class RecentRecords {
  private readonly recent = new Map<string, StateRecord>();
  /** The copies `recent` handed out: the objects whose refusals must be checked on a fresh read. */
  private readonly handedOut = new WeakSet<StateRecord>();

  // Records are never changed in place (every transition works on a copy: domain/transitions/result.ts, commit),
  // so the cache keeps the object itself, and each hand-out is a shallow copy only to tell it apart.
  remember(record: StateRecord): void {
    this.recent.delete(record.orderId);
    this.recent.set(record.orderId, record);
    if (this.recent.size > RECENT_RECORDS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** Forgets the version known of this order (it is gone, or another instance wrote since). */
  forget(orderId: string): void {
    this.recent.delete(orderId);
  }

  /** A copy of the version this instance knows last, or undefined; never a store request. */
  copy(orderId: string): StateRecord | undefined {
    const known = this.recent.get(orderId);
    if (!known) return undefined;
    const copy = { ...known };
    this.handedOut.add(copy);
    return copy;
  }

  /** Did this come from `copy` (so it may be stale)? */
  isCopy(record: StateRecord | undefined): boolean {
    return record !== undefined && this.handedOut.has(record);
  }
}
