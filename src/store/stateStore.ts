import type { Container } from "@azure/cosmos";
import type { ProcessState, StateRecord, TransitionResult } from "../domain";
import { RecentRecords } from "./recentRecords";
import { parseStateRecord } from "./stateRecordParse";
import { StateQueries, type ListPosition, type Page, type RecordFilter } from "./stateQueries";
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

  // --- Queries (stateQueries.ts) ---

  /** Which of these orders have a state record: one cross-partition query returning ids only. */
  existing(orderIds: readonly string[]): Promise<Set<string>> {
    return this.queries.existing(orderIds);
  }

  /** Due, unlocked records for the starter to claim: compensations first, then oldest first. */
  findClaimable(now: Date, limit: number): Promise<Page<StateRecord>> {
    return this.queries.findClaimable(now, limit);
  }

  /** Attempts whose deadline passed inside the window, one page at a time (StateQueries.findExpired). */
  findExpired(opts: {
    now: Date;
    windowStart: Date;
    pageSize: number;
    continuation?: string | undefined;
  }): Promise<Page<StateRecord>> {
    return this.queries.findExpired(opts);
  }

  /** Records whose decided alert is still unsent (StateQueries.findUnsentAlerts). */
  findUnsentAlerts(opts: { decidedBefore: Date; limit: number }): Promise<StateRecord[]> {
    return this.queries.findUnsentAlerts(opts);
  }

  /** Operator listing, most recently updated first, keyset-paged (StateQueries.list). */
  list(
    opts: RecordFilter & {
      limit: number;
      after?: ListPosition | undefined;
    },
  ): Promise<{ items: StateRecord[]; next: ListPosition | undefined }> {
    return this.queries.list(opts);
  }

  /** How many records `filter` matches (after `after`, in the listing's order, when given). */
  countMatching(filter: RecordFilter, after?: ListPosition): Promise<number> {
    return this.queries.countMatching(filter, after);
  }

  count(states: readonly ProcessState[]): Promise<number> {
    return this.queries.count(states);
  }

  /** Orders waiting, parked or deferred, for a service that was unavailable: the number a recovery alert gives. */
  countParked(): Promise<number> {
    return this.queries.countParked();
  }

  /** Orders in Error since `since` because they waited for services longer than OUTAGE_MAX_SECONDS. */
  countOutlasted(since: string): Promise<number> {
    return this.queries.countOutlasted(since);
  }

  /** Creation time of the oldest Pending record: how long the backlog has been waiting. */
  oldestPendingCreatedAt(): Promise<string | undefined> {
    return this.queries.oldestPendingCreatedAt();
  }

  countByState(): Promise<Record<ProcessState, number>> {
    return this.queries.countByState();
  }
}
