import type { Container } from "@azure/cosmos";
import {
  admit,
  breakerAlertSent,
  breakerRecordId,
  breakerRecordSchema,
  closedBreaker,
  closesOnSuccess,
  opensOnFailure,
  recordFailure,
  recordSuccess,
  unavailableUntil,
  unsentAlerts,
  type AgentName,
  type BreakerAlert,
  type BreakerRecord,
  type BreakerSettings,
} from "../domain";
import { cosmosStatus } from "../store/cosmosErrors";
import type { Logger } from "../telemetry/logger";
import type { Notifications } from "../messaging/notifications";

/**
 * How long an instance trusts its copy of a closed or half-open breaker before reading it again: calls within it
 * cost no read, and an opening elsewhere reaches this instance within it. An open copy is trusted until its
 * retryAt (nothing but a probe can change it before then, and no probe may start before then).
 */
export const BREAKER_CACHE_MS = 1_000;

/** Writers re-read and re-decide after a lost race (412) this many times; the breaker is advisory after that. */
const MAX_RACES = 3;

/** A change the record is waiting for: decided on the record as it is when its turn comes. */
type Decide = (record: BreakerRecord, now: Date) => Promise<BreakerRecord | null>;
interface QueuedChange {
  decide: Decide;
  log: Logger;
  done: () => void;
}

/** A call may start, or not before `until`. */
export type CallAdmission = { allowed: true } | { allowed: false; until: Date };

export interface ServiceBreakerDependencies {
  /** The `leases` container, which holds one breaker record per service. */
  container: Container;
  settings: BreakerSettings;
  notifications: Notifications;
  /**
   * The counts the breaker's alerts give: orders not finished, orders parked, and orders in Error since `since`
   * because they waited longer than OUTAGE_MAX_SECONDS.
   */
  counts: {
    waiting(): Promise<number>;
    parked(): Promise<number>;
    outlasted(since: string): Promise<number>;
  };
  now(): Date;
}

/**
 * The shared circuit breaker of one remote service: every instance of the app reads and writes the same record
 * (src/domain/breaker.ts decides), so all stop calling together when it opens and one probe decides when they
 * resume. Each write is a conditional replace on `_etag`; a lost race re-reads and re-decides. The alert an opening
 * or a closing decides is written with it, then sent under its stable MessageId and marked sent; the Supervisor's
 * sweep sends what a crash left unsent. A store failure never fails the remote call itself: the breaker then
 * lets calls through and says so in the log.
 */
export class ServiceBreaker {
  private cached: { record: BreakerRecord; readAt: number } | undefined;
  /** Failures and successes reported while this instance's last write is under way (see change). */
  private queued: QueuedChange[] = [];
  private writing = false;

  constructor(
    readonly service: AgentName,
    private readonly deps: ServiceBreakerDependencies,
  ) {}

  /** The breaker's record, from this instance's copy while that is fresh enough. */
  async current(): Promise<BreakerRecord> {
    const now = this.deps.now();
    const copy = this.cached;
    if (copy) {
      const age = now.getTime() - copy.readAt;
      const openUntil = copy.record.state === "open" ? Date.parse(copy.record.retryAt ?? "") : NaN;
      if (age >= 0 && (age < BREAKER_CACHE_MS || now.getTime() < openUntil)) return copy.record;
    }
    return this.read();
  }

  /** Until when calls are sure to be refused; null when one may start (admission control asks this). */
  async unavailableUntil(): Promise<Date | null> {
    return unavailableUntil(await this.current(), this.deps.now());
  }

  /** Before each call: may `orderId`'s call start? Taking the probe is a write that only one caller wins. */
  async admit(orderId: string, log: Logger): Promise<CallAdmission> {
    try {
      for (let race = 0; race < MAX_RACES; race++) {
        const record = race === 0 ? await this.current() : await this.read();
        const admission = admit(record, orderId, this.deps.now(), this.deps.settings);
        if (admission.kind === "call") return { allowed: true };
        if (admission.kind === "refuse") return { allowed: false, until: admission.until };
        if (await this.write(admission.record, record)) {
          log.warn(`${this.service}: circuit half-open, the call for ${orderId} is the probe`);
          return { allowed: true };
        }
      }
      // Others kept winning the probe: one of them is probing now.
      const until = unavailableUntil(await this.read(), this.deps.now());
      return until ? { allowed: false, until } : { allowed: true };
    } catch (error) {
      log.warn(`${this.service}: circuit breaker unreadable (${String(error)}); calling anyway`);
      return { allowed: true };
    }
  }

  /** A call failed in a way that may be the service's (5xx, 408, 429, timeout, network). */
  async onFailure(orderId: string, log: Logger): Promise<void> {
    await this.change(log, async (record, now) => {
      const waiting = opensOnFailure(record, orderId) ? await this.deps.counts.waiting() : null;
      return recordFailure(record, orderId, now, this.deps.settings, waiting);
    });
  }

  /**
   * The service answered `orderId`'s call (2xx or a 4xx refusal): it is up. Costs no write while it was closed and
   * healthy.
   */
  async onSuccess(orderId: string, log: Logger): Promise<void> {
    await this.change(log, async (record, now) => {
      const counts = closesOnSuccess(record)
        ? {
            parked: await this.deps.counts.parked(),
            outlasted: record.openedAt ? await this.deps.counts.outlasted(record.openedAt) : 0,
          }
        : null;
      return recordSuccess(record, orderId, now, counts);
    });
  }

  /** Sends the alerts a crash left unsent, decided before `decidedBefore` (the Supervisor's sweep). */
  async resendUnsentAlerts(log: Logger, decidedBefore: Date): Promise<number> {
    const record = await this.read();
    const due = unsentAlerts(record).filter((a) => a.decidedAt <= decidedBefore.toISOString());
    for (const alert of due) {
      log.warn(`supervisor: alert ${alert.messageId} was decided but not sent; sending it now`);
    }
    await this.sendAlerts(log, due);
    return due.length;
  }

  /**
   * Applies `decide` to the record; resolves once it is written (or given up). One write at a time per instance:
   * the changes reported meanwhile wait, then go in one write, each decided on the record the one before made.
   * Concurrent writers of one instance would race each other on the record's etag, and the calls of an outage fail
   * in bursts: with each writer giving up after MAX_RACES lost races, a burst of six failures from four orders once
   * left two of them uncounted, and the breaker opened late, or (with fewer calls) not at all. Now only other
   * instances can race a write.
   */
  private change(log: Logger, decide: Decide): Promise<void> {
    return new Promise((done) => {
      this.queued.push({ decide, log, done });
      this.writeQueued();
    });
  }

  private writeQueued(): void {
    if (this.writing) return;
    this.writing = true;
    void (async () => {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0);
        try {
          await this.apply(batch);
        } finally {
          for (const change of batch) change.done();
        }
      }
    })().finally(() => {
      this.writing = false;
      // A change queued between the loop's last look and here.
      if (this.queued.length > 0) this.writeQueued();
    });
  }

  /** Decides every change of `batch` in turn and writes the outcome once; a lost race re-reads and decides again. */
  private async apply(batch: readonly QueuedChange[]): Promise<void> {
    const log = batch[0]!.log;
    try {
      for (let race = 0; race < MAX_RACES; race++) {
        const record = race === 0 ? await this.current() : await this.read();
        let next = record;
        const moves: Array<{ log: Logger; from: string; to: string }> = [];
        for (const change of batch) {
          const decided = await change.decide(next, this.deps.now());
          if (decided === null) continue;
          if (decided.state !== next.state)
            moves.push({ log: change.log, from: next.state, to: decided.state });
          next = decided;
        }
        if (next === record) return;
        const written = await this.write(next, record);
        if (!written) continue;
        for (const move of moves) move.log.warn(`${this.service}: circuit ${move.from} → ${move.to}`);
        if (unsentAlerts(written).length > unsentAlerts(record).length)
          await this.sendAlerts(moves.at(-1)?.log ?? log, unsentAlerts(written));
        return;
      }
      log.warn(
        `${this.service}: circuit breaker update lost ${MAX_RACES} races to other instances; left to the next call`,
      );
    } catch (error) {
      log.warn(`${this.service}: circuit breaker not updated (${String(error)})`);
    }
  }

  /** Sends each alert under its MessageId, then marks it sent on the record. */
  private async sendAlerts(log: Logger, alerts: readonly BreakerAlert[]): Promise<void> {
    for (const alert of alerts) {
      try {
        await this.deps.notifications.alert(
          log,
          {
            kind: alert.kind,
            service: this.service,
            orderId: null,
            processState: null,
            reason: alert.reason,
          },
          { messageId: alert.messageId, at: alert.decidedAt },
        );
      } catch (error) {
        log.warn(
          `${this.service}: alert ${alert.messageId} not sent (${String(error)}); the Supervisor resends it`,
        );
        return;
      }
      for (let race = 0; race < MAX_RACES; race++) {
        const current = await this.read();
        const marked = breakerAlertSent(current, alert.messageId, this.deps.now());
        if (marked === null || (await this.write(marked, current))) break;
      }
    }
  }

  private async read(): Promise<BreakerRecord> {
    const id = breakerRecordId(this.service);
    const { resource } = await this.deps.container.item(id, id).read<BreakerRecord>();
    const record = resource
      ? breakerRecordSchema.parse(resource)
      : closedBreaker(this.service, this.deps.now());
    this.cached = { record, readAt: this.deps.now().getTime() };
    return record;
  }

  /** Writes `next` if the record is still `read` (a create when it never existed); undefined when a race was lost. */
  private async write(next: BreakerRecord, read: BreakerRecord): Promise<BreakerRecord | undefined> {
    const id = breakerRecordId(this.service);
    try {
      const { _etag, ...body } = next;
      const { resource } = read._etag
        ? await this.deps.container
            .item(id, id)
            .replace(body, { accessCondition: { type: "IfMatch", condition: read._etag } })
        : await this.deps.container.items.create(body);
      const written = breakerRecordSchema.parse(resource);
      this.cached = { record: written, readAt: this.deps.now().getTime() };
      return written;
    } catch (error) {
      const status = cosmosStatus(error);
      if (status === 412 || status === 409) {
        this.cached = undefined;
        return undefined;
      }
      throw error;
    }
  }
}
