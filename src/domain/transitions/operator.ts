import type { ProcessState, StateRecord } from "../stateRecord";
import { requestCompensation } from "./compensation";
import { commit, refuse, type TransitionResult } from "./result";

export interface OperatorContext {
  now: Date;
  /** Who acted, for the audit trail. */
  operator: string;
  reason?: string;
}

/** The states an operator may retry from: the two in which automation has given up. */
export const RETRYABLE_STATES = ["Error", "CompensationFailed"] as const satisfies readonly ProcessState[];
/** The states an operator may cancel from: not finished, and not already being undone. */
export const CANCELLABLE_STATES = [
  "Pending",
  "Processing",
  "Error",
] as const satisfies readonly ProcessState[];

/**
 * Sends an order an operator has looked at back to work: Error → Pending, CompensationFailed →
 * CompensationPending, with the Supervisor's count reset (the only way a failure count goes down).
 */
export function operatorRetry(record: StateRecord, ctx: OperatorContext): TransitionResult {
  if (!(RETRYABLE_STATES as readonly ProcessState[]).includes(record.processState)) {
    return refuse(
      record,
      "operatorRetry",
      "WrongState",
      `only Error or CompensationFailed orders can be retried, this one is ${record.processState}`,
    );
  }
  const forward = record.processState === "Error";
  return commit(
    record,
    ctx.now,
    { event: "operatorRetry", by: `operator:${ctx.operator}`, ...(ctx.reason ? { detail: ctx.reason } : {}) },
    (draft) => {
      draft.retryAt = null;
      // The operator has the order in hand: an alert a crash left unsent would only announce what they are fixing.
      draft.alert = null;
      draft.parkedSince = null;
      if (forward) {
        draft.processState = "Pending";
        draft.failureCount = 0;
      } else {
        draft.processState = "CompensationPending";
        draft.compensationFailureCount = 0;
        // A failed undo is tried again: forget its failed outcome, keep the error in the audit trail.
        for (const step of draft.steps) if (step.undo?.status === "Failed") step.undo = null;
      }
    },
  );
}

/**
 * An operator cancels an order that is not finished: its completed (and in-doubt) steps are undone in reverse.
 * Allowed from Pending, Processing and Error; an order already compensating or finished is refused.
 */
export function operatorCancel(record: StateRecord, ctx: OperatorContext): TransitionResult {
  return requestCompensation(
    record,
    { now: ctx.now, reason: ctx.reason ?? "cancelled by operator", requestedBy: `operator:${ctx.operator}` },
    CANCELLABLE_STATES,
  );
}
