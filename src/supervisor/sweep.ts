import type { Dependencies } from "../app/dependencies";
import {
  AGENT_NAMES,
  ALERT_RESEND_AFTER_SECONDS,
  attemptStartedAt,
  expire,
  MAX_PAGES_PER_SWEEP,
  SUPERVISOR_LEASE,
  type ProcessState,
  type StateRecord,
} from "../domain";
import { sendDecidedAlert } from "../messaging/decidedAlerts";
import { checkSubmissions } from "./submissions";
import type { Logger } from "../telemetry/logger";
import { noteSupervisorLease, recordRecovery } from "../telemetry/metrics";
import { contextOf, inSpan, spanLogger, SpanKind } from "../telemetry/tracing";

export interface SweepReport {
  leader: boolean;
  /** Holder of the lease when this instance is not the leader. */
  leaderHolder?: string;
  scanned: number;
  acted: number;
  skipped: number;
  pages: number;
  outcomes: Partial<Record<ProcessState, number>>;
  /** Alerts a crash left unsent, sent by this sweep. */
  alertsResent: number;
  /** Stored orders that had no state record, given one by this sweep (submissions.ts). */
  submissionsCompleted: number;
}

/** Sends the alerts that records decided but no one sent (the deciding process died between write and send). */
async function resendUnsentAlerts(
  deps: Pick<Dependencies, "config" | "states" | "notifications" | "breaker" | "now">,
  log: Logger,
  now: Date,
): Promise<number> {
  const decidedBefore = new Date(now.getTime() - ALERT_RESEND_AFTER_SECONDS * 1000);
  const unsent = await deps.states.findUnsentAlerts({ decidedBefore, limit: deps.config.supervisorPageSize });
  for (const record of unsent) {
    log.warn(`supervisor: alert ${record.alert!.messageId} was decided but not sent; sending it now`);
    await sendDecidedAlert(deps, log, record, "supervisor");
  }
  // The services' outage alerts, decided on their breaker records: one point read per service.
  let services = 0;
  for (const agent of AGENT_NAMES)
    services += await deps.breaker(agent).resendUnsentAlerts(log, decidedBefore);
  return unsent.length + services;
}

/**
 * The Supervisor's decision on one attempt whose deadline passed, as the sweep and the recovery queue both take it:
 * `expire`, applied only if the record is unchanged since it was read and still held by `lockedBy` (someone who
 * moved first wins, and the record is left alone); then the alert and the status message an Error or a
 * CompensationFailed calls for. Returns the state written, or undefined when nothing was.
 */
export async function expireAttempt(
  deps: Pick<Dependencies, "config" | "states" | "notifications" | "infraFaults" | "now">,
  log: Logger,
  record: StateRecord,
  lockedBy: string,
  now: Date,
  /** What found the attempt: its deadline notice, or the sweep. */
  trigger: "deadline" | "sweep",
): Promise<ProcessState | undefined> {
  // Did the app's own store or bus fail while this attempt ran? Then the attempt is not the order's failure.
  const infraFault = await deps.infraFaults.faultSince(attemptStartedAt(record));
  const outcome = await deps.states.applyIfUnchanged(record, (r) =>
    expire(r, {
      now,
      expectedLockedBy: lockedBy,
      maxFailures: deps.config.supervisorMaxFailures,
      backoffSeconds: deps.config.supervisorBackoffSeconds,
      infraFault,
      outageMaxSeconds: deps.config.outageMaxSeconds,
    }),
  );
  if (outcome.kind !== "written") return undefined;
  const state = outcome.record.processState;
  recordRecovery(state, trigger);
  if (state === "Error" || state === "CompensationFailed") {
    await sendDecidedAlert(deps, log, outcome.record, "supervisor");
    await deps.notifications.status(
      log,
      outcome.record,
      state === "Error" ? "failed" : "compensationFailed",
      outcome.record.lastError?.message ?? null,
    );
  }
  return state;
}

/**
 * One Supervisor sweep. Only the lease holder acts (Leader Election), so two supervisors never compete for the
 * same record; even so, each decision is a conditional write that checks the expired lockedBy, and a 412 means
 * someone moved first: the record is skipped, never overwritten. The query is bounded by a completeBy window and
 * paged with continuation tokens, because it fans out to every partition.
 */
export async function sweep(
  deps: Pick<
    Dependencies,
    | "config"
    | "states"
    | "leases"
    | "notifications"
    | "breaker"
    | "orders"
    | "workflows"
    | "submissionsChecked"
    | "infraFaults"
    | "now"
  >,
  log: Logger,
  holder: string,
): Promise<SweepReport> {
  const { config } = deps;
  const now = deps.now();
  const report: SweepReport = {
    leader: false,
    scanned: 0,
    acted: 0,
    skipped: 0,
    pages: 0,
    outcomes: {},
    alertsResent: 0,
    submissionsCompleted: 0,
  };
  const lease = await deps.leases.tryAcquire(SUPERVISOR_LEASE, holder, config.supervisorLeaseSeconds, now);
  noteSupervisorLease(lease.acquired ? lease.expiresAt : null);
  if (!lease.acquired) {
    log.log(`supervisor: not the leader (lease held by ${lease.holder} until ${lease.expiresAt})`);
    return { ...report, leaderHolder: lease.holder };
  }
  report.leader = true;
  const windowStart = new Date(now.getTime() - config.supervisorWindowHours * 3600_000);
  let continuation: string | undefined;
  do {
    const page = await deps.states.findExpired({
      now,
      windowStart,
      pageSize: config.supervisorPageSize,
      continuation,
    });
    report.pages++;
    for (const record of page.items) {
      report.scanned++;
      // In the order's own trace: the sweep's decision on it sits beside the attempt it ends.
      const state = await inSpan(
        "supervisor expire",
        {
          kind: SpanKind.INTERNAL,
          parent: contextOf(record.traceparent),
          from: log,
          attributes: { "sas.order_id": record.orderId, "sas.trigger": "sweep" },
        },
        async (span) => {
          const decided = await expireAttempt(
            deps,
            spanLogger(log, span),
            record,
            record.lockedBy ?? "",
            now,
            "sweep",
          );
          span.setAttribute("sas.decision", decided ?? "none");
          return decided;
        },
      );
      if (state === undefined) {
        report.skipped++;
        continue;
      }
      report.acted++;
      report.outcomes[state] = (report.outcomes[state] ?? 0) + 1;
    }
    continuation = page.continuation;
  } while (continuation && report.pages < MAX_PAGES_PER_SWEEP);
  report.alertsResent = await resendUnsentAlerts(deps, log, now);
  report.submissionsCompleted = (await checkSubmissions(deps, log)).completed;
  await deps.infraFaults
    .alertIfLasting(log, deps.notifications)
    .catch((error: unknown) => log.warn(`supervisor: infrastructure alert not sent yet (${String(error)})`));
  log.log(
    `supervisor sweep: scanned ${report.scanned}, acted ${report.acted}, skipped ${report.skipped} in ${report.pages} page(s) ${JSON.stringify(report.outcomes)}` +
      (report.alertsResent > 0 ? `, ${report.alertsResent} unsent alert(s) sent` : "") +
      (report.submissionsCompleted > 0 ? `, ${report.submissionsCompleted} stored order(s) submitted` : ""),
  );
  return report;
}
