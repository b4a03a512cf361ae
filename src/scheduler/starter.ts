import type { Dependencies } from "../app/dependencies";
import { claim, STARTER_LEASE, STARTER_LEASE_SECONDS } from "../domain";
import type { Logger } from "../services/logger";

/** Starts the orchestration of a claimed attempt (the durable client's startNew, in the app). */
export type StartAttempt = (instanceId: string, orderId: string) => Promise<void>;

export interface StarterReport {
  ran: boolean;
  capacity: number;
  claimed: number;
  started: number;
  skipped: number;
}

/**
 * Claims due Pending / CompensationPending records, oldest first, and starts one orchestration per claim, never
 * letting Processing + Compensating exceed MAX_IN_FLIGHT (admission control towards the remote services).
 * Claimers take turns through a short lease, so the timer and the after-submission fast path cannot both claim
 * up to the limit at once. A claim whose start is lost (crash between claim and startNew) expires at its claim
 * deadline and the Supervisor recovers it.
 */
export async function claimAndStart(
  deps: Pick<Dependencies, "config" | "states" | "leases" | "now">,
  log: Logger,
  start: StartAttempt,
  holder: string,
): Promise<StarterReport> {
  const report: StarterReport = { ran: false, capacity: 0, claimed: 0, started: 0, skipped: 0 };
  const lease = await deps.leases.tryAcquire(STARTER_LEASE, holder, STARTER_LEASE_SECONDS, deps.now());
  if (!lease.acquired) return report;
  report.ran = true;
  try {
    const inFlight = await deps.states.count(["Processing", "Compensating"]);
    report.capacity = Math.max(0, deps.config.maxInFlight - inFlight);
    if (report.capacity === 0) return report;
    const now = deps.now();
    const due = await deps.states.findClaimable(now, report.capacity);
    for (const record of due.items) {
      const outcome = await deps.states.applyIfUnchanged(record, (r) =>
        claim(r, { now, claimTimeoutSeconds: deps.config.claimTimeoutSeconds }),
      );
      if (outcome.kind !== "written") {
        report.skipped++;
        continue;
      }
      report.claimed++;
      const instanceId = outcome.record.lockedBy!;
      try {
        await start(instanceId, record.orderId);
        report.started++;
      } catch (error) {
        log.warn(
          `starter: claimed ${instanceId} but could not start it (${String(error)}); the Supervisor recovers it`,
        );
      }
    }
    if (report.claimed > 0)
      log.log(`starter: claimed ${report.claimed}, started ${report.started}, capacity ${report.capacity}`);
    return report;
  } finally {
    await deps.leases.release(STARTER_LEASE, holder);
  }
}
