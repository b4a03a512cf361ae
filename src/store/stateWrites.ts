/**
 * The state store's conditional writes: create, and the etag-conditional replace that every transition goes
 * through, fenced by `lockedBy` (a write that ends an attempt's lock gives its admission place back). Apart from
 * the cache (recentRecords.ts) and the queries (stateQueries.ts) because this is where the concurrency contract
 * lives: nothing is ever overwritten, and a 412 (someone moved first) is re-read and re-decided, or given up.
 */
import type { Container } from "@azure/cosmos";
import type { Refusal, StateRecord, TransitionResult } from "../domain";
import { cosmosStatus } from "./cosmosErrors";
import type { RecentRecords } from "./recentRecords";
import { withSystemProperties } from "./writeEcho";

/** What happened to a transition the store was asked to apply. */
export type StoreOutcome =
  | { kind: "written"; record: StateRecord }
  | { kind: "unchanged"; record: StateRecord }
  | { kind: "refused"; refusal: Refusal; record: StateRecord }
  | { kind: "notFound" };

/** How many times a writer re-reads and re-decides after losing a race (412) before giving up. */
const MAX_RACE_RETRIES = 5;

/** The hooks told of this instance's writes (see the StateStore constructor). */
export interface WriteHooks {
  onLockReleased?: ((before: StateRecord) => Promise<void>) | undefined;
  onWritten?: ((before: StateRecord | null, after: StateRecord) => void) | undefined;
}

export class StateWrites {
  constructor(
    private readonly container: Container,
    private readonly recent: RecentRecords,
    /** A fresh read of the record (which also updates `recent`): the store's `get`. */
    private readonly read: (orderId: string) => Promise<StateRecord | undefined>,
    private readonly hooks: WriteHooks,
  ) {}

  private async written(before: StateRecord, after: StateRecord): Promise<StoreOutcome> {
    const { onLockReleased, onWritten } = this.hooks;
    onWritten?.(before, after);
    if (onLockReleased && before.lockedBy !== null && after.lockedBy !== before.lockedBy)
      await onLockReleased(before);
    return { kind: "written", record: after };
  }

  /** The record as this instance just wrote it (writeEcho.ts). */
  private echoed(sent: StateRecord, resource: unknown): StateRecord {
    return withSystemProperties(sent, resource, `state record ${sent.orderId}`);
  }

  /** Creates the record, or returns the one already there (a redelivered submission). */
  async create(record: StateRecord): Promise<{ created: boolean; record: StateRecord }> {
    try {
      const { resource } = await this.container.items.create(record);
      const created = this.echoed(record, resource);
      this.recent.remember(created);
      this.hooks.onWritten?.(null, created);
      return { created: true, record: created };
    } catch (error) {
      if (cosmosStatus(error) !== 409) throw error;
      const existing = await this.read(record.orderId);
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
      this.recent.remember(written);
      return written;
    } catch (error) {
      if (cosmosStatus(error) === 412 || cosmosStatus(error) === 404) this.recent.forget(record.orderId);
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
    let known = fresh ?? this.recent.copy(orderId);
    for (let race = 0; race <= MAX_RACE_RETRIES; race++) {
      const current = known ?? (await this.read(orderId));
      const maybeStale = known !== undefined && this.recent.isCopy(known);
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
}
