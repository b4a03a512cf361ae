/**
 * The catalogue of queries on the state container: the paged listings and counts the Supervisor, the starter,
 * the alert sender and the operator API read by. Apart from the writes because none of them writes or uses the
 * cache of recent records: each is a fresh query whose text must match a composite index of the container.
 */
import type { Container, SqlParameter } from "@azure/cosmos";
import {
  CLAIMABLE_STATES,
  LOCKED_STATES,
  PROCESS_STATES,
  OUTLASTED_MARKER,
  type ProcessState,
  type StateRecord,
} from "../domain";
import { parseStateRecord } from "./stateRecordParse";

/** Where an operator listing stopped: the sort key of the last record of a page. */
export interface ListPosition {
  updatedAt: string;
  orderId: string;
}

export interface Page<T> {
  items: T[];
  continuation: string | undefined;
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

/** The starter's query for due, unlocked records at `now`, with its parameters (also what bench/orderShape makes). */
export function claimableQuery(now: Date): { query: string; parameters: SqlParameter[] } {
  return {
    query: STATE_QUERIES.claimable,
    parameters: [...inParameters(CLAIMABLE_STATES), { name: "@now", value: now.toISOString() }],
  };
}

/** The queries of the state store (StateStore hands these on unchanged). */
export class StateQueries {
  constructor(private readonly container: Container) {}

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
      parseStateRecord(r, r.orderId ?? "?"),
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
    const { query, parameters } = claimableQuery(now);
    return this.page(query, parameters, limit, undefined);
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
    return resources.map((r: { orderId?: string }) => parseStateRecord(r, r.orderId ?? "?"));
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
      .map((r: { orderId?: string }) => parseStateRecord(r, r.orderId ?? "?"));
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
