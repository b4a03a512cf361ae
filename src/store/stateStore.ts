import type { Container, SqlParameter } from "@azure/cosmos";
import {
  CLAIMABLE_STATES,
  LOCKED_STATES,
  PROCESS_STATES,
  OUTLASTED_MARKER,
  stateRecordSchema,
  type ProcessState,
  type Refusal,
  type StateRecord,
  type TransitionResult,
} from "../domain";
import { cosmosStatus } from "./cosmosErrors";

/** What happened to a transition the store was asked to apply. */
export type StoreOutcome =
  | { kind: "written"; record: StateRecord }
  | { kind: "unchanged"; record: StateRecord }
  | { kind: "refused"; refusal: Refusal; record: StateRecord }
  | { kind: "notFound" };

/** Where an operator listing stopped: the sort key of the last record of a page. */
export interface ListPosition {
  updatedAt: string;
  orderId: string;
}

export interface Page<T> {
  items: T[];
  continuation: string | undefined;
}

export class CorruptRecordError extends Error {
  constructor(orderId: string, detail: string) {
    super(`state record ${orderId} does not match the schema: ${detail}`);
    this.name = "CorruptRecordError";
  }
}

/** `@state0, @state1, ...` for an IN list of states, and the parameters that fill it. */
const inList = (states: readonly ProcessState[]): string => states.map((_, i) => `@state${i}`).join(", ");
/**
 * The queries that filter on processState and sort. Cosmos DB serves `WHERE processState ... ORDER BY x` from the
 * composite index (processState, x) only when the ORDER BY names processState first, and refuses a multi-field
 * ORDER BY that no composite index matches; so each ORDER BY here leads with the filtered field and equals one of
 * the state container's composite indexes (infra/cosmos-emulator.config.json; a unit test holds them together).
 * Sorting by state first costs nothing in meaning: within each state the order is the one wanted.
 */
export const STATE_QUERIES = {
  /** Compensations first ('CompensationPending' < 'Pending'), then the oldest. */
  claimable:
    `SELECT * FROM c WHERE c.processState IN (${inList(CLAIMABLE_STATES)}) AND IS_NULL(c.lockedBy) ` +
    "AND (IS_NULL(c.retryAt) OR c.retryAt <= @now) ORDER BY c.processState ASC, c.createdAt ASC",
  /** Compensating before Processing, then the oldest deadline. */
  expired:
    `SELECT * FROM c WHERE c.processState IN (${inList(LOCKED_STATES)}) ` +
    "AND c.completeBy <= @now AND c.completeBy >= @windowStart ORDER BY c.processState ASC, c.completeBy ASC",
  oldestPending:
    "SELECT TOP 1 VALUE c.createdAt FROM c WHERE c.processState = 'Pending' " +
    "ORDER BY c.processState ASC, c.createdAt ASC",
  listOrder: " ORDER BY c.updatedAt DESC, c.id DESC",
  /** Also the order in which a bulk action pages through the records of one state. */
  listInStateOrder: " ORDER BY c.processState ASC, c.updatedAt DESC, c.id DESC",
  /** Followed by a filter's WHERE clause; no ORDER BY, so any index serves it. */
  countMatching: "SELECT VALUE COUNT(1) FROM c",
} as const;

/** What an operator narrows a listing or a bulk action to; every field optional, all of them must hold. */
export interface RecordFilter {
  state?: ProcessState | undefined;
  /** The record's lastError.code. */
  errorCode?: string | undefined;
  /** updatedAt at or after, as toISOString writes it (so text order is time order). */
  updatedSince?: string | undefined;
  /** updatedAt strictly before. */
  updatedBefore?: string | undefined;
}

/**
 * The WHERE clause of a filter and a keyset position: fixed text whatever the input, every value a parameter.
 * Each condition is one the composite index of the listing's ORDER BY can serve alongside it.
 */
function filterClause(
  filter: RecordFilter,
  after: ListPosition | undefined,
): { where: string; parameters: SqlParameter[] } {
  const conditions: Array<[string, SqlParameter[]]> = [];
  const add = (text: string, ...parameters: SqlParameter[]) => conditions.push([text, parameters]);
  if (filter.state) add("c.processState = @state", { name: "@state", value: filter.state });
  if (filter.errorCode) add("c.lastError.code = @errorCode", { name: "@errorCode", value: filter.errorCode });
  if (filter.updatedSince)
    add("c.updatedAt >= @updatedSince", { name: "@updatedSince", value: filter.updatedSince });
  if (filter.updatedBefore)
    add("c.updatedAt < @updatedBefore", { name: "@updatedBefore", value: filter.updatedBefore });
  if (after) {
    add(
      "(c.updatedAt < @afterUpdatedAt OR (c.updatedAt = @afterUpdatedAt AND c.id < @afterOrderId))",
      { name: "@afterUpdatedAt", value: after.updatedAt },
      { name: "@afterOrderId", value: after.orderId },
    );
  }
  return {
    where: conditions.length > 0 ? ` WHERE ${conditions.map(([text]) => text).join(" AND ")}` : "",
    parameters: conditions.flatMap(([, parameters]) => parameters),
  };
}

const inParameters = (states: readonly ProcessState[]): SqlParameter[] =>
  states.map((value, i) => ({ name: `@state${i}`, value }));

/** How many times a writer re-reads and re-decides after losing a race (412) before giving up. */
const MAX_RACE_RETRIES = 5;

/**
 * Records this instance read or wrote last, kept to skip a read before the next write: about 2.5 KB each, so
 * a few MB at most.
 */
export const RECENT_RECORDS = 2_000;

/**
 * The state store: one record per order, every write a conditional replace on `_etag`. The decisions are made
 * by the pure transitions of src/domain; this class only reads, asks, and persists, and on a 412 (someone moved
 * first) re-reads and asks again rather than overwriting.
 */
export class StateStore {
  /**
   * The version of each record this instance last read or wrote, with its etag, most recent last. An attempt's
   * activities, its reply router and the starter that claimed it mostly run in one instance, one after another,
   * so the next write can replace the version it knows instead of reading first. The copy may be stale (another
   * instance wrote since): a write from it is a conditional replace like any other, and on a 412 the record is
   * read and the decision taken again. A refusal or a no-op decided on a copy is checked again on a fresh read,
   * so a stale copy can never refuse what the current record allows.
   */
  private readonly recent = new Map<string, StateRecord>();
  /** The copies `recent` handed out: the objects whose refusals must be checked on a fresh read. */
  private readonly handedOut = new WeakSet<StateRecord>();

  constructor(
    private readonly container: Container,
    /**
     * Called after each write of this instance that ended an attempt's lock, with the record as it was before:
     * the attempt's admission place is given back there (src/coordination/admissionShards.ts). Every transition that ends
     * a lock goes through `apply` or `applyIfUnchanged`, so none can forget it.
     */
    private readonly onLockReleased?: (before: StateRecord) => Promise<void>,
    /** Told of each write of this instance that landed, with the record before (null: created) and after. */
    private readonly onWritten?: (before: StateRecord | null, after: StateRecord) => void,
  ) {}

  private async written(before: StateRecord, after: StateRecord): Promise<StoreOutcome> {
    this.onWritten?.(before, after);
    if (this.onLockReleased && before.lockedBy !== null && after.lockedBy !== before.lockedBy)
      await this.onLockReleased(before);
    return { kind: "written", record: after };
  }

  // Records are never changed in place (every transition works on a copy: domain/transitions/result.ts, commit),
  // so the cache keeps the object itself, and each hand-out is a shallow copy only to tell it apart.
  private remember(record: StateRecord): void {
    this.recent.delete(record.orderId);
    this.recent.set(record.orderId, record);
    if (this.recent.size > RECENT_RECORDS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** A copy of the version this instance knows last, or undefined; never a store request. */
  private recentCopy(orderId: string): StateRecord | undefined {
    const known = this.recent.get(orderId);
    if (!known) return undefined;
    const copy = { ...known };
    this.handedOut.add(copy);
    return copy;
  }

  /**
   * The record as this instance last read or wrote it, or as the store has it when this instance knows none.
   * For decisions that a later conditional write re-checks, or that the caller checks again with `get` when
   * the copy says no (`isRecentCopy`); anything shown to a person or deciding alone reads with `get`.
   */
  async getRecent(orderId: string): Promise<StateRecord | undefined> {
    return this.recentCopy(orderId) ?? (await this.get(orderId));
  }

  /** Did this come from `getRecent`'s copy of an earlier version (so it may be stale)? */
  isRecentCopy(record: StateRecord | undefined): boolean {
    return record !== undefined && this.handedOut.has(record);
  }

  private parse(raw: unknown, orderId: string): StateRecord {
    const parsed = stateRecordSchema.safeParse(raw);
    if (!parsed.success) throw new CorruptRecordError(orderId, parsed.error.issues[0]?.message ?? "invalid");
    return parsed.data;
  }

  /**
   * The record as this instance just wrote it. The store answers a create or replace with the document it was
   * sent plus its system properties (`_etag`, `_ts`, ...), and what was sent is a typed record a transition made,
   * so only those properties are taken from the answer: parsing the echo again cost more CPU than the write.
   */
  private echoed(sent: StateRecord, resource: unknown): StateRecord {
    const system: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(resource as Record<string, unknown>))
      if (key.startsWith("_")) system[key] = value;
    if (typeof system._etag !== "string")
      throw new Error(`state record ${sent.orderId}: the store's answer to a write has no _etag`);
    return { ...sent, ...system } as StateRecord;
  }

  async get(orderId: string): Promise<StateRecord | undefined> {
    const { resource } = await this.container.item(orderId, orderId).read();
    if (!resource) {
      this.recent.delete(orderId);
      return undefined;
    }
    const record = this.parse(resource, orderId);
    this.remember(record);
    return record;
  }

  /** Creates the record, or returns the one already there (a redelivered submission). */
  async create(record: StateRecord): Promise<{ created: boolean; record: StateRecord }> {
    try {
      const { resource } = await this.container.items.create(record);
      const created = this.echoed(record, resource);
      this.remember(created);
      this.onWritten?.(null, created);
      return { created: true, record: created };
    } catch (error) {
      if (cosmosStatus(error) !== 409) throw error;
      const existing = await this.get(record.orderId);
      if (!existing) throw error;
      return { created: false, record: existing };
    }
  }

  /** Conditional replace; undefined when the etag no longer matches (412). */
  async replace(record: StateRecord): Promise<StateRecord | undefined> {
    if (!record._etag) throw new Error(`record ${record.orderId} has no _etag: read it before replacing it`);
    try {
      const { resource } = await this.container
        .item(record.orderId, record.orderId)
        .replace(record, { accessCondition: { type: "IfMatch", condition: record._etag } });
      const written = this.echoed(record, resource);
      this.remember(written);
      return written;
    } catch (error) {
      if (cosmosStatus(error) === 412 || cosmosStatus(error) === 404) this.recent.delete(record.orderId);
      if (cosmosStatus(error) === 412) return undefined;
      throw error;
    }
  }

  /**
   * Applies `decide` to the current record and persists the result. `decide` is a pure transition: on a lost
   * race it runs again on the fresh record, so its answer may change (e.g. to a refusal). It starts from the
   * version this instance knows (see `recent`) when the caller gives none, and a refusal or no-op decided on
   * such a copy is decided again on a fresh read.
   */
  async apply(
    orderId: string,
    decide: (record: StateRecord) => TransitionResult,
    /** A copy the caller has just read or written, to save the first read; a lost race re-reads as usual. */
    fresh?: StateRecord,
  ): Promise<StoreOutcome> {
    let known = fresh ?? this.recentCopy(orderId);
    for (let race = 0; race <= MAX_RACE_RETRIES; race++) {
      const current = known ?? (await this.get(orderId));
      const maybeStale = known !== undefined && this.isRecentCopy(known);
      known = undefined;
      if (!current) return { kind: "notFound" };
      const result = decide(current);
      if (!result.ok || !result.changed) {
        if (maybeStale) continue;
        return result.ok
          ? { kind: "unchanged", record: current }
          : { kind: "refused", refusal: result.refusal, record: current };
      }
      const written = await this.replace({ ...result.record, _etag: current._etag });
      if (written) return this.written(current, written);
    }
    throw new Error(`state record ${orderId}: lost ${MAX_RACE_RETRIES + 1} write races in a row`);
  }

  /**
   * Like `apply`, but decides on the record the caller already read and gives up on a lost race instead of
   * re-deciding: the Supervisor's contract ("a 412 means someone moved first: skip it").
   */
  async applyIfUnchanged(
    read: StateRecord,
    decide: (record: StateRecord) => TransitionResult,
  ): Promise<StoreOutcome | { kind: "conflict" }> {
    const result = decide(read);
    if (!result.ok) return { kind: "refused", refusal: result.refusal, record: read };
    if (!result.changed) return { kind: "unchanged", record: read };
    const written = await this.replace({ ...result.record, _etag: read._etag });
    return written ? this.written(read, written) : { kind: "conflict" };
  }

  /**
   * Writes the record unchanged, only if it is still the version read: its etag changes, so that any other write
   * conditional on the version read (a claim that paused) fails. True when it landed.
   */
  async fence(read: StateRecord): Promise<boolean> {
    return (await this.replace(read)) !== undefined;
  }

  private async page(
    query: string,
    parameters: SqlParameter[],
    pageSize: number,
    continuation: string | undefined,
  ): Promise<Page<StateRecord>> {
    const iterator = this.container.items.query(
      { query, parameters },
      { maxItemCount: pageSize, ...(continuation ? { continuationToken: continuation } : {}) },
    );
    const response = await iterator.fetchNext();
    const items = (response.resources ?? []).map((r: { orderId?: string }) =>
      this.parse(r, r.orderId ?? "?"),
    );
    return { items, continuation: response.hasMoreResults ? response.continuationToken : undefined };
  }

  /** Which of these orders have a state record: one cross-partition query returning ids only. */
  async existing(orderIds: readonly string[]): Promise<Set<string>> {
    if (orderIds.length === 0) return new Set();
    const names = orderIds.map((_, i) => `@id${i}`);
    const { resources } = await this.container.items
      .query<string>({
        query: `SELECT VALUE c.orderId FROM c WHERE c.orderId IN (${names.join(", ")})`,
        parameters: orderIds.map((value, i) => ({ name: names[i]!, value })),
      })
      .fetchAll();
    return new Set(resources);
  }

  /** Due, unlocked records for the starter to claim: compensations first, then oldest first. */
  findClaimable(now: Date, limit: number): Promise<Page<StateRecord>> {
    return this.page(
      STATE_QUERIES.claimable,
      [...inParameters(CLAIMABLE_STATES), { name: "@now", value: now.toISOString() }],
      limit,
      undefined,
    );
  }

  /**
   * Attempts whose deadline passed inside the window, compensations first, then oldest deadline first, one page
   * at a time. The window
   * and the page size bound each sweep: this query fans out to every physical partition.
   */
  findExpired(opts: {
    now: Date;
    windowStart: Date;
    pageSize: number;
    continuation?: string | undefined;
  }): Promise<Page<StateRecord>> {
    return this.page(
      STATE_QUERIES.expired,
      [
        ...inParameters(LOCKED_STATES),
        { name: "@now", value: opts.now.toISOString() },
        { name: "@windowStart", value: opts.windowStart.toISOString() },
      ],
      opts.pageSize,
      opts.continuation,
    );
  }

  /**
   * Records whose decided alert is still unsent (its process died between the write and the send), decided before
   * `decidedBefore`, and still in the state the alert announces.
   */
  async findUnsentAlerts(opts: { decidedBefore: Date; limit: number }): Promise<StateRecord[]> {
    const top = Math.max(1, Math.floor(opts.limit));
    const { resources } = await this.container.items
      .query({
        query:
          `SELECT TOP ${top} * FROM c WHERE IS_DEFINED(c.alert) AND NOT IS_NULL(c.alert) ` +
          "AND IS_NULL(c.alert.sentAt) AND c.alert.decidedAt <= @decidedBefore AND c.alert.kind = c.processState",
        parameters: [{ name: "@decidedBefore", value: opts.decidedBefore.toISOString() }],
      })
      .fetchAll();
    return resources.map((r: { orderId?: string }) => this.parse(r, r.orderId ?? "?"));
  }

  /**
   * Operator listing, most recently updated first (ties by orderId), within a state or across all, optionally
   * narrowed further (bulk actions). Keyset paging: a page resumes strictly after the position of the previous
   * page's last record, so any position is a valid request and no store cursor ever comes from a caller.
   */
  async list(
    opts: RecordFilter & {
      limit: number;
      after?: ListPosition | undefined;
    },
  ): Promise<{ items: StateRecord[]; next: ListPosition | undefined }> {
    if (!Number.isInteger(opts.limit) || opts.limit < 1 || opts.limit > 1000) {
      throw new RangeError(`list: limit must be a whole number from 1 to 1000, got ${opts.limit}`);
    }
    const { where, parameters } = filterClause(opts, opts.after);
    // One more than asked tells whether another page follows. With a state filter, the state leads the order.
    const query =
      `SELECT TOP ${opts.limit + 1} * FROM c${where}` +
      (opts.state ? STATE_QUERIES.listInStateOrder : STATE_QUERIES.listOrder);
    const { resources } = await this.container.items.query({ query, parameters }).fetchAll();
    const items = resources
      .slice(0, opts.limit)
      .map((r: { orderId?: string }) => this.parse(r, r.orderId ?? "?"));
    const last = items.at(-1);
    return {
      items,
      next:
        resources.length > opts.limit && last
          ? { updatedAt: last.updatedAt, orderId: last.orderId }
          : undefined,
    };
  }

  /** How many records `filter` matches (after `after`, in the listing's order, when given). */
  async countMatching(filter: RecordFilter, after?: ListPosition): Promise<number> {
    const { where, parameters } = filterClause(filter, after);
    const { resources } = await this.container.items
      .query<number>({ query: STATE_QUERIES.countMatching + where, parameters })
      .fetchAll();
    // Across partitions the SDK may hand back one partial count per partition.
    return resources.reduce((sum, n) => sum + n, 0);
  }

  async count(states: readonly ProcessState[]): Promise<number> {
    const { resources } = await this.container.items
      .query<number>({
        query: "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(@states, c.processState)",
        parameters: [{ name: "@states", value: [...states] }],
      })
      .fetchAll();
    return resources.reduce((sum, n) => sum + n, 0);
  }

  /** Orders waiting, parked or deferred, for a service that was unavailable: the number a recovery alert gives. */
  async countParked(): Promise<number> {
    const { resources } = await this.container.items
      .query<number>({
        query:
          "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(@states, c.processState) AND IS_STRING(c.parkedSince)",
        parameters: [{ name: "@states", value: [...CLAIMABLE_STATES] }],
      })
      .fetchAll();
    return resources.reduce((sum, n) => sum + n, 0);
  }

  /** Orders in Error since `since` because they waited for services longer than OUTAGE_MAX_SECONDS. */
  async countOutlasted(since: string): Promise<number> {
    const { resources } = await this.container.items
      .query<number>({
        query:
          "SELECT VALUE COUNT(1) FROM c WHERE c.processState = 'Error' AND c.updatedAt >= @since " +
          "AND CONTAINS(c.lastError.message, @marker)",
        parameters: [
          { name: "@since", value: since },
          { name: "@marker", value: OUTLASTED_MARKER },
        ],
      })
      .fetchAll();
    return resources.reduce((sum, n) => sum + n, 0);
  }

  /** Creation time of the oldest Pending record: how long the backlog has been waiting. */
  async oldestPendingCreatedAt(): Promise<string | undefined> {
    const { resources } = await this.container.items.query<string>(STATE_QUERIES.oldestPending).fetchAll();
    return resources[0];
  }

  async countByState(): Promise<Record<ProcessState, number>> {
    const counts = Object.fromEntries(PROCESS_STATES.map((s) => [s, 0])) as Record<ProcessState, number>;
    await Promise.all(
      PROCESS_STATES.map(async (state) => {
        counts[state] = await this.count([state]);
      }),
    );
    return counts;
  }
}
