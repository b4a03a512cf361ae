import type { Container } from "@azure/cosmos";
import {
  emptyInfraFaultRecord,
  faultSince,
  INFRA_FAULTS,
  INFRA_PARTS,
  infraAlertDue,
  infraAlertMessageId,
  infraAlertUnsent,
  infraFaultRecordSchema,
  mergeInfraFaults,
  noteFault,
  type InfraEpisode,
  type InfraFaultRecord,
  type InfraPart,
} from "../domain";
import { cosmosStatus } from "../store/cosmosErrors";
import { describeInfraError } from "./infraResilience";
import type { Logger } from "../telemetry/logger";
import type { Notifications } from "../messaging/notifications";

/** How often an instance writes what it saw to the shared record, at most: faults come in bursts. */
export const INFRA_FLUSH_MS = 2_000;
/** How long the Supervisor trusts its copy of the shared record when deciding expiries one after another. */
const SHARED_CACHE_MS = 1_000;

/**
 * What this instance saw of the app's own store and bus failing, and what all instances saw, in one record of the
 * `leases` container (src/domain/infraFaults.ts decides). Each instance notes the faults that reached it and writes
 * them to the record a moment later; while the store itself is down that write fails, and goes through once it
 * answers again, which is before any expiry can be written. The Supervisor asks, for each attempt it expires,
 * whether the app failed during it.
 */
export class InfraFaults {
  private readonly local: Record<InfraPart, InfraEpisode | null> = { store: null, bus: null };
  private unwritten = false;
  private flushing: Promise<void> | undefined;
  private shared: { record: InfraFaultRecord; readAt: number } | undefined;

  constructor(
    private readonly container: Container,
    private readonly now: () => Date,
  ) {}

  /** A fault of `part` that got past the retries inside a call. Never throws, never waits. */
  note(part: InfraPart, error: unknown): void {
    this.local[part] = noteFault(this.local[part], this.now(), describeInfraError(error));
    this.unwritten = true;
    this.flushing ??= this.flushSoon().finally(() => {
      this.flushing = undefined;
    });
  }

  private async flushSoon(): Promise<void> {
    // unref: a pending write of fault notes must not keep a process alive.
    while (this.unwritten) {
      await new Promise<void>((resolve) => setTimeout(resolve, INFRA_FLUSH_MS).unref());
      await this.flush().catch(() => undefined);
    }
  }

  /** Merges this instance's notes into the shared record (a conditional write; a lost race merges again). */
  async flush(): Promise<void> {
    for (let race = 0; race < 3; race++) {
      this.unwritten = false;
      const current = await this.read();
      const next = mergeInfraFaults(current, this.local);
      if (await this.write(next, current._etag)) return;
    }
    this.unwritten = true;
  }

  private async read(): Promise<InfraFaultRecord> {
    const { resource } = await this.container.item(INFRA_FAULTS.recordId, INFRA_FAULTS.recordId).read();
    const record = resource ? infraFaultRecordSchema.parse(resource) : emptyInfraFaultRecord();
    this.shared = { record, readAt: this.now().getTime() };
    return record;
  }

  private async write(record: InfraFaultRecord, etag: string | undefined): Promise<boolean> {
    try {
      const { resource } =
        etag === undefined
          ? await this.container.items.create(record)
          : await this.container
              .item(INFRA_FAULTS.recordId, INFRA_FAULTS.recordId)
              .replace(record, { accessCondition: { type: "IfMatch", condition: etag } });
      if (resource)
        this.shared = { record: infraFaultRecordSchema.parse(resource), readAt: this.now().getTime() };
      return true;
    } catch (error) {
      const status = cosmosStatus(error);
      if (status === 409 || status === 412) {
        this.unwritten = true;
        return false;
      }
      throw error;
    }
  }

  /**
   * Did the app's own store or bus fail at or after `from`, by this instance's notes or the shared record? A store
   * that cannot be read now says nothing either way: the expiry that asks would not be written either.
   */
  async faultSince(from: Date): Promise<{ part: InfraPart; detail: string } | undefined> {
    const mine = faultSince(this.local, from);
    if (mine) return mine;
    const copy = this.shared;
    const fresh =
      copy && this.now().getTime() - copy.readAt >= 0 && this.now().getTime() - copy.readAt < SHARED_CACHE_MS;
    const record = fresh ? copy.record : await this.read().catch(() => undefined);
    return record ? faultSince(record, from) : undefined;
  }

  /**
   * The Supervisor leader's check, each sweep: an episode that has lasted INFRA_FAULTS.alertAfterSeconds raises
   * one InfrastructureUnavailable alert, decided in the record first (so only one instance sends it), sent under
   * the episode's MessageId (so a resend is dropped as a duplicate), then marked sent. While the bus is what
   * fails the send fails too; the decided alert then goes out at a later sweep.
   */
  async alertIfLasting(log: Logger, notifications: Notifications): Promise<number> {
    let sent = 0;
    const now = this.now();
    for (const part of INFRA_PARTS) {
      let record = await this.read();
      const episode = record[part];
      if (infraAlertDue(episode, now)) {
        record = { ...record, [part]: { ...episode!, alertedAt: now.toISOString(), alertSentAt: null } };
        if (!(await this.write(record, record._etag))) continue;
        record = this.shared!.record;
      }
      const decided = record[part];
      if (!decided || !infraAlertUnsent(decided)) continue;
      await notifications.alert(log, infraAlert(part, decided), {
        messageId: infraAlertMessageId(part, decided),
        at: decided.alertedAt!,
      });
      sent++;
      // Marked sent on the record as it is now; should someone have written meanwhile, a later sweep sends again
      // under the same MessageId, which the alerts queue drops.
      await this.write({ ...record, [part]: { ...decided, alertSentAt: now.toISOString() } }, record._etag);
    }
    return sent;
  }
}

function infraAlert(part: InfraPart, episode: InfraEpisode): Parameters<Notifications["alert"]>[1] {
  const seconds = Math.round((Date.parse(episode.lastAt) - Date.parse(episode.since)) / 1000);
  const what = part === "store" ? "state store (Cosmos DB)" : "bus (Service Bus)";
  return {
    kind: "InfrastructureUnavailable",
    orderId: null,
    processState: null,
    reason:
      `the app's ${what} has been failing for ${seconds} s, since ${episode.since}; orders wait (up to ` +
      `OUTAGE_MAX_SECONDS) instead of counting failures; last: ${episode.detail}`,
  };
}
