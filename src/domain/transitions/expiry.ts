import type { StateRecord } from "../stateRecord";
// The back-off lives with the other timing formulas, which the dashboard also runs in the browser.
import { backoffSeconds } from "../timingBudget";
import type { InfraPart } from "../infraFaults";
import { outageOutlasted } from "./outage";
import { addSeconds, commit, decideAlert, refuse, release, type TransitionResult } from "./result";

export interface ExpireContext {
  now: Date;
  /** The lockedBy the Supervisor read: the write applies only to that expired attempt. */
  expectedLockedBy: string;
  /** Failures tolerated with a retry; the next one is final (Error, or CompensationFailed for an undo). */
  maxFailures: number;
  backoffSeconds: number;
  /**
   * A fault of the app's own store or bus during the attempt (src/domain/infraFaults.ts), if there was one: the
   * attempt then waits like one that met a downstream outage, without counting, up to outageMaxSeconds, unless it
   * ended on its service's failure (endedOnServiceFailure).
   */
  infraFault?: { part: InfraPart; detail: string } | undefined;
  outageMaxSeconds?: number;
}

/**
 * When the attempt holding the record began: its claim, as the audit trail has it (the last entries are always
 * kept); the record's last write when the trail no longer shows it.
 */
export function attemptStartedAt(record: StateRecord): Date {
  for (let i = record.history.length - 1; i >= 0; i--) {
    const entry = record.history[i]!;
    if (entry.event === "claimed" && entry.attempt === record.attempt) return new Date(entry.at);
  }
  return new Date(record.updatedAt);
}

/**
 * Did the attempt end early on the agent's answer that the service failed every call (stepFailedTransient, or an
 * undo's transient compensationStepFailed)? Both end it at that error's time. Its cause is then known and is not the
 * app's infrastructure: whatever store or bus fault was noted meanwhile, somewhere in the app, the answer went out
 * and was recorded.
 */
export function endedOnServiceFailure(record: StateRecord): boolean {
  return record.lastError !== null && record.completeBy === record.lastError.at;
}

/**
 * The Supervisor's decision on an attempt whose completeBy has passed (timeouts and failures look the same in
 * the store). It owns failureCount: +1, then back to Pending after a growing back-off, or Error past the limit.
 * For compensation it counts separately and ends in CompensationFailed, so that operators can tell a stuck undo
 * from a failed forward step.
 */
export function expire(record: StateRecord, ctx: ExpireContext): TransitionResult {
  const forward = record.processState === "Processing";
  if (!forward && record.processState !== "Compensating") {
    return refuse(record, "expire", "WrongState", `only Processing or Compensating records expire`);
  }
  if (record.lockedBy !== ctx.expectedLockedBy) {
    return refuse(
      record,
      "expire",
      "NotLockHolder",
      `expected lock ${ctx.expectedLockedBy}, found ${record.lockedBy ?? "none"}: someone moved first`,
    );
  }
  if (record.completeBy === null || record.completeBy > ctx.now.toISOString()) {
    return refuse(record, "expire", "NotExpired", `completeBy ${record.completeBy} has not passed`);
  }
  const { infraFault } = ctx;
  // Only an attempt that ran out of time can owe its failure to the app's own store or bus. One that ended on its
  // service's failure counts like any other: an order whose own request makes the service fail must reach Error,
  // not come back for an hour because some send elsewhere was slow (SLOW_SEND_MS) while it ran, failing its calls
  // again and again, and probing the service's breaker with them.
  if (
    infraFault &&
    !endedOnServiceFailure(record) &&
    !outageOutlasted(record, ctx.now, ctx.outageMaxSeconds ?? 0)
  ) {
    // Not the order's failure: the app itself could not send or record its steps. Back after the first back-off.
    return commit(
      record,
      ctx.now,
      {
        event: "parked",
        by: "supervisor",
        detail: `attempt ${record.attempt} expired at ${record.completeBy} while the app's own ${infraFault.part} failed (${infraFault.detail}); not counted`,
      },
      (draft) => {
        draft.processState = forward ? "Pending" : "CompensationPending";
        release(draft);
        draft.retryAt = addSeconds(ctx.now, backoffSeconds(ctx.backoffSeconds, 1));
        draft.parkedSince ??= ctx.now.toISOString();
      },
    );
  }
  const failures = (forward ? record.failureCount : record.compensationFailureCount) + 1;
  const exhausted = failures > ctx.maxFailures;
  const expiredAt = record.completeBy;
  const cause = record.lastError;
  return commit(
    record,
    ctx.now,
    {
      event: exhausted ? "retriesExhausted" : "expired",
      by: "supervisor",
      detail: `attempt ${record.attempt} expired at ${expiredAt}; failure ${failures} of ${ctx.maxFailures + 1} allowed`,
    },
    (draft) => {
      if (forward) draft.failureCount = failures;
      else draft.compensationFailureCount = failures;
      release(draft);
      if (exhausted) {
        draft.processState = forward ? "Error" : "CompensationFailed";
        draft.retryAt = null;
        draft.lastError = {
          code: "RetriesExhausted",
          message: `${failures} attempt${failures === 1 ? "" : "s"} failed or timed out${cause ? `; last error ${cause.code}: ${cause.message}` : ""}`,
          at: ctx.now.toISOString(),
        };
        decideAlert(draft, forward ? "Error" : "CompensationFailed", draft.lastError.message, ctx.now);
      } else {
        draft.processState = forward ? "Pending" : "CompensationPending";
        draft.retryAt = addSeconds(ctx.now, backoffSeconds(ctx.backoffSeconds, failures));
      }
    },
  );
}
