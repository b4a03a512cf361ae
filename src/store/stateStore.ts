import type { Container } from "@azure/cosmos";
import type { StateRecord, TransitionResult } from "../domain";
import { RecentRecords } from "./recentRecords";
import { parseStateRecord } from "./stateRecordParse";
import { StateQueries } from "./stateQueries";
import { StateWrites, type StoreOutcome } from "./stateWrites";

export { RECENT_RECORDS } from "./recentRecords";
export { CorruptRecordError } from "./stateRecordParse";
export { STATE_QUERIES, type ListPosition, type Page, type RecordFilter } from "./stateQueries";
export type { StoreOutcome } from "./stateWrites";

/**
 * The state store: one record per order, every write a conditional replace on `_etag`. The decisions are made
 * by the pure transitions of src/domain; this class only reads, asks, and persists, and on a 412 (someone moved
 * first) re-reads and asks again rather than overwriting.
 *
 * The one entry point to three parts, each in its own module: the conditional writes (stateWrites.ts), the cache
 * of the records this instance read or wrote last (recentRecords.ts), and the catalogue of queries
 * (stateQueries.ts). Reads of one record are here, since they fill the cache the writes start from.
 */
export class StateStore {
  /** The version of each record this instance last read or wrote, with its etag (see RecentRecords). */
  private readonly recent = new RecentRecords();
  private readonly writes: StateWrites;
  private readonly queries: StateQueries;

  constructor(
    private readonly container: Container,
    /**
     * Called after each write of this instance that ended an attempt's lock, with the record as it was before:
     * the attempt's admission place is given back there (src/coordination/admissionShards.ts). Every transition that ends
     * a lock goes through `apply` or `applyIfUnchanged`, so none can forget it.
     */
    onLockReleased?: (before: StateRecord) => Promise<void>,
    /** Told of each write of this instance that landed, with the record before (null: created) and after. */
    onWritten?: (before: StateRecord | null, after: StateRecord) => void,
  ) {
    this.writes = new StateWrites(container, this.recent, (orderId) => this.get(orderId), {
      onLockReleased,
      onWritten,
    });
    this.queries = new StateQueries(container);
  }

  // --- Reads of one record ---

  /**
   * The record as this instance last read or wrote it, or as the store has it when this instance knows none.
   * For decisions that a later conditional write re-checks, or that the caller checks again with `get` when
   * the copy says no (`isRecentCopy`); anything shown to a person or deciding alone reads with `get`.
   */
  async getRecent(orderId: string): Promise<StateRecord | undefined> {
    return this.recent.copy(orderId) ?? (await this.get(orderId));
  }

  /** Did this come from `getRecent`'s copy of an earlier version (so it may be stale)? */
  isRecentCopy(record: StateRecord | undefined): boolean {
    return this.recent.isCopy(record);
  }

  async get(orderId: string): Promise<StateRecord | undefined> {
    const { resource } = await this.container.item(orderId, orderId).read();
    if (!resource) {
      this.recent.forget(orderId);
      return undefined;
    }
    const record = parseStateRecord(resource, orderId);
    this.recent.remember(record);
    return record;
  }

  // --- Conditional writes (stateWrites.ts) ---

  /** Creates the record, or returns the one already there (a redelivered submission). */
  create(record: StateRecord): Promise<{ created: boolean; record: StateRecord }> {
    return this.writes.create(record);
  }

  /** Conditional replace; undefined when the etag no longer matches (412). */
  replace(record: StateRecord): Promise<StateRecord | undefined> {
    return this.writes.replace(record);
  }

  /**
   * Applies `decide` to the current record and persists the result, re-deciding on a fresh read after a lost
   * race (StateWrites.apply).
   */
  apply(
    orderId: string,
    decide: (record: StateRecord) => TransitionResult,
    /** A copy the caller has just read or written, to save the first read; a lost race re-reads as usual. */
    fresh?: StateRecord,
  ): Promise<StoreOutcome> {
    return this.writes.apply(orderId, decide, fresh);
  }

  /**
   * Like `apply`, but decides on the record the caller already read and gives up on a lost race instead of
   * re-deciding: the Supervisor's contract ("a 412 means someone moved first: skip it").
   */
  applyIfUnchanged(
    read: StateRecord,
    decide: (record: StateRecord) => TransitionResult,
  ): Promise<StoreOutcome | { kind: "conflict" }> {
    return this.writes.applyIfUnchanged(read, decide);
  }

  /** Writes the record unchanged, only if it is still the version read; true when it landed. */
  fence(read: StateRecord): Promise<boolean> {
    return this.writes.fence(read);
  }

  // --- Queries (stateQueries.ts, where each is documented; the signatures are taken from there) ---

  /** Which of these orders have a state record: one cross-partition query returning ids only. */
  existing(...args: Parameters<StateQueries["existing"]>): ReturnType<StateQueries["existing"]> {
    return this.queries.existing(...args);
  }

  /** Due, unlocked records for the starter to claim: compensations first, then oldest first. */
  findClaimable(
    ...args: Parameters<StateQueries["findClaimable"]>
  ): ReturnType<StateQueries["findClaimable"]> {
    return this.queries.findClaimable(...args);
  }

  /** Attempts whose deadline passed inside the window, one page at a time. */
  findExpired(...args: Parameters<StateQueries["findExpired"]>): ReturnType<StateQueries["findExpired"]> {
    return this.queries.findExpired(...args);
  }

  /** Records whose decided alert is still unsent. */
  findUnsentAlerts(
    ...args: Parameters<StateQueries["findUnsentAlerts"]>
  ): ReturnType<StateQueries["findUnsentAlerts"]> {
    return this.queries.findUnsentAlerts(...args);
  }

  /** Operator listing, most recently updated first, keyset-paged. */
  list(...args: Parameters<StateQueries["list"]>): ReturnType<StateQueries["list"]> {
    return this.queries.list(...args);
  }

  /** How many records a filter matches (after a position, in the listing's order, when given). */
  countMatching(
    ...args: Parameters<StateQueries["countMatching"]>
  ): ReturnType<StateQueries["countMatching"]> {
    return this.queries.countMatching(...args);
  }

  /** How many records are in any of these states. */
  count(...args: Parameters<StateQueries["count"]>): ReturnType<StateQueries["count"]> {
    return this.queries.count(...args);
  }

  /** Orders waiting, parked or deferred, for a service that was unavailable: the number a recovery alert gives. */
  countParked(...args: Parameters<StateQueries["countParked"]>): ReturnType<StateQueries["countParked"]> {
    return this.queries.countParked(...args);
  }

  /** Orders in Error since a time because they waited for services longer than OUTAGE_MAX_SECONDS. */
  countOutlasted(
    ...args: Parameters<StateQueries["countOutlasted"]>
  ): ReturnType<StateQueries["countOutlasted"]> {
    return this.queries.countOutlasted(...args);
  }

  /** Creation time of the oldest Pending record: how long the backlog has been waiting. */
  oldestPendingCreatedAt(
    ...args: Parameters<StateQueries["oldestPendingCreatedAt"]>
  ): ReturnType<StateQueries["oldestPendingCreatedAt"]> {
    return this.queries.oldestPendingCreatedAt(...args);
  }

  /** How many records are in each state. */
  countByState(...args: Parameters<StateQueries["countByState"]>): ReturnType<StateQueries["countByState"]> {
    return this.queries.countByState(...args);
  }
}
