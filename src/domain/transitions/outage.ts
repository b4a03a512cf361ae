/**
 * Riding out a downstream outage. While a service's shared circuit breaker is open, its agent makes no call and
 * says until when the service is unavailable. Such an answer is the service's failure, not the order's: the order
 * is parked (back to Pending, or CompensationPending, unlocked) until the breaker's next probe, with its failure
 * count untouched. Only attempts that called the service count, so calls per order stay within
 * RETRY_BUDGET_PER_STEP however long the outage lasts. An outage longer than OUTAGE_MAX_SECONDS (measured from
 * when the order was first parked) no longer parks: the attempt fails and counts like any other, so the order
 * reaches Error, with its alert, for an operator.
 */
import type { ErrorInfo, StateRecord } from "../stateRecord";
import { BREAKER } from "../breaker";
import { checkFence, commit, refuse, release, type TransitionResult } from "./result";
import type { StepFailureContext } from "./steps";

/**
 * What the error of an attempt that waited too long says, and what the recovery alert's count looks for in the
 * message of the Error it led to.
 */
export const OUTLASTED_MARKER = "OUTAGE_MAX_SECONDS";

/** Parked orders come back spread over this many seconds after the probe time, so they do not all claim at once. */
export const PARK_JITTER_SECONDS = 5;

/**
 * A deterministic spread in [0, PARK_JITTER_SECONDS) from the order and attempt: transitions are pure, and two
 * orders parked in the same instant still come back at different times.
 */
export function parkJitterSeconds(orderId: string, attempt: number): number {
  let hash = 2166136261;
  for (const ch of `${orderId}:${attempt}`) hash = Math.imul(hash ^ ch.charCodeAt(0), 16777619) >>> 0;
  return (hash / 2 ** 32) * PARK_JITTER_SECONDS;
}

/**
 * When a parked order is due again: the service's "unavailable until", capped at the longest open period and at
 * the end of the order's OUTAGE_MAX_SECONDS (it then stops waiting and counts its failures), plus jitter.
 */
function returnAt(record: StateRecord, now: Date, until: Date, outageMaxSeconds: number): string {
  const waitingSince = Date.parse(record.parkedSince ?? now.toISOString());
  const latest = Math.min(
    now.getTime() + BREAKER.maxOpenSeconds * 1000,
    waitingSince + outageMaxSeconds * 1000 + 1,
  );
  const base = Math.max(now.getTime(), Math.min(until.getTime(), latest));
  return new Date(base + parkJitterSeconds(record.orderId, record.attempt) * 1000).toISOString();
}

/** Has this order waited for services longer than OUTAGE_MAX_SECONDS, counted from when it was first parked? */
export function outageOutlasted(record: StateRecord, now: Date, outageMaxSeconds: number): boolean {
  return (
    record.parkedSince !== null && now.getTime() - Date.parse(record.parkedSince) > outageMaxSeconds * 1000
  );
}

export interface ParkContext extends StepFailureContext {
  /** Until when the agent's breaker refuses calls. */
  until: Date;
  outageMaxSeconds: number;
}

/**
 * The agent made no call because the service's breaker is open: the attempt ends without a failure, the lock is
 * released, and the order is due again at the probe time (plus jitter). Forward steps park to Pending, undos to
 * CompensationPending; failureCount and compensationFailureCount stay as they were.
 */
export function parkForOutage(record: StateRecord, ctx: ParkContext): TransitionResult {
  const fenced = checkFence(record, "parkForOutage", ctx.lockedBy);
  if (fenced) return fenced;
  const forward = record.processState === "Processing";
  if (!forward && record.processState !== "Compensating") {
    return refuse(
      record,
      "parkForOutage",
      "WrongState",
      `expected Processing or Compensating, found ${record.processState}`,
    );
  }
  const step = record.steps[ctx.stepIndex];
  const awaiting = forward ? step?.status === "Dispatched" : step?.undo?.status === "Dispatched";
  if (!step || !awaiting) {
    return refuse(
      record,
      "parkForOutage",
      "StepOutOfOrder",
      `step ${ctx.stepIndex} is not awaiting an answer`,
    );
  }
  const error: ErrorInfo = { ...ctx.error, at: ctx.now.toISOString() };
  const retryAt = returnAt(record, ctx.now, ctx.until, ctx.outageMaxSeconds);
  return commit(
    record,
    ctx.now,
    {
      event: "parked",
      by: "scheduler",
      detail: `${step.name}${forward ? "" : " undo"}: ${step.agent} unavailable; due again ${retryAt}`,
    },
    (draft) => {
      const s = draft.steps[ctx.stepIndex]!;
      if (forward) s.lastError = error;
      else s.undo!.lastError = error;
      draft.lastError = error;
      draft.processState = forward ? "Pending" : "CompensationPending";
      release(draft);
      draft.retryAt = retryAt;
      draft.parkedSince ??= error.at;
    },
  );
}

export interface DeferContext {
  now: Date;
  /** Until when the service the order needs next refuses calls. */
  until: Date;
  /** The service, for the audit trail. */
  service: string;
  outageMaxSeconds: number;
}

/**
 * The starter's admission control: a due order whose next step needs a service that is sure to refuse is not
 * claimed (that attempt would fail fast) but made due again at the probe time, plus jitter. No attempt, no count.
 */
export function deferForOutage(record: StateRecord, ctx: DeferContext): TransitionResult {
  if (record.processState !== "Pending" && record.processState !== "CompensationPending") {
    return refuse(
      record,
      "deferForOutage",
      "WrongState",
      `only Pending or CompensationPending records are deferred`,
    );
  }
  if (record.lockedBy !== null) {
    return refuse(record, "deferForOutage", "NotLockHolder", `record is locked by ${record.lockedBy}`);
  }
  const retryAt = returnAt(record, ctx.now, ctx.until, ctx.outageMaxSeconds);
  return commit(
    record,
    ctx.now,
    { event: "deferred", by: "starter", detail: `${ctx.service} unavailable; due again ${retryAt}` },
    (draft) => {
      draft.retryAt = retryAt;
      draft.parkedSince ??= ctx.now.toISOString();
    },
  );
}
