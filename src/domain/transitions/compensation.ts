import { agentRequestId } from "../ids";
import { nextUndoIndex, type ErrorInfo, type ProcessState, type StateRecord } from "../stateRecord";
import {
  addSeconds,
  checkFence,
  commit,
  decideAlert,
  refuse,
  release,
  unchanged,
  type TransitionResult,
} from "./result";
import type { DispatchContext, FencedContext, StepFailureContext, StepOutcomeContext } from "./steps";

export interface CompensationRequestContext {
  now: Date;
  reason: string;
  /** Who asks: `operator:<name>`, `policy`, ... recorded in the audit trail. */
  requestedBy: string;
}

/** States from which compensation may be requested by anyone but an operator. */
const REQUESTABLE: readonly ProcessState[] = ["Pending", "Processing"];

/**
 * Asks for the order to be undone. Any running attempt loses its lock at once (its next fenced write is refused),
 * and the starter claims the record as Compensating. With nothing to undo the order is Compensated at once.
 */
export function requestCompensation(
  record: StateRecord,
  ctx: CompensationRequestContext,
  allowed: readonly ProcessState[] = REQUESTABLE,
): TransitionResult {
  if (record.processState === "CompensationPending" || record.processState === "Compensating") {
    return refuse(record, "requestCompensation", "AlreadyCompensating", `compensation is already under way`);
  }
  if (!allowed.includes(record.processState)) {
    return refuse(
      record,
      "requestCompensation",
      "WrongState",
      `compensation cannot be requested from ${record.processState}`,
    );
  }
  return commit(
    record,
    ctx.now,
    { event: "compensationRequested", by: ctx.requestedBy, detail: ctx.reason },
    (draft) => {
      draft.compensationRequest = {
        reason: ctx.reason,
        requestedBy: ctx.requestedBy,
        at: ctx.now.toISOString(),
      };
      release(draft);
      draft.retryAt = null;
      // An operator cancelling an Error order has it in hand: an alert left unsent would only repeat it.
      draft.alert = null;
      // The undo gets its own OUTAGE_MAX_SECONDS: the forward steps' wait is not held against it.
      draft.parkedSince = null;
      draft.processState = nextUndoIndex(draft) === -1 ? "Compensated" : "CompensationPending";
    },
  );
}

function precheck(record: StateRecord, transition: string, ctx: FencedContext): TransitionResult | null {
  const fenced = checkFence(record, transition, ctx.lockedBy);
  if (fenced) return fenced;
  if (record.processState !== "Compensating") {
    return refuse(record, transition, "WrongState", `expected Compensating, found ${record.processState}`);
  }
  return null;
}

/** The Scheduler records an undo request before sending it, with its deadline; a same-attempt repeat is a no-op. */
export function compensationStepDispatched(record: StateRecord, ctx: DispatchContext): TransitionResult {
  const refused = precheck(record, "compensationStepDispatched", ctx);
  if (refused) return refused;
  const expected = nextUndoIndex(record);
  if (ctx.stepIndex !== expected) {
    return refuse(
      record,
      "compensationStepDispatched",
      "StepOutOfOrder",
      `next step to undo is ${expected}, not ${ctx.stepIndex}`,
    );
  }
  const step = record.steps[expected]!;
  if (step.undo?.status === "Dispatched" && step.undo.dispatchedInAttempt === record.attempt)
    return unchanged(record);
  return commit(
    record,
    ctx.now,
    { event: "compensationStepDispatched", by: "scheduler", detail: step.name },
    (draft) => {
      const s = draft.steps[expected]!;
      const completeBy = addSeconds(ctx.now, ctx.stepTimeoutSeconds);
      s.undo = {
        status: "Dispatched",
        requestId: agentRequestId(ctx.lockedBy, expected, "undo"),
        dispatchedAt: ctx.now.toISOString(),
        dispatchedInAttempt: draft.attempt,
        completeBy,
        completedAt: null,
        result: null,
        lastError: s.undo?.lastError ?? null,
      };
      draft.completeBy = completeBy;
    },
  );
}

export interface CompensationStepDoneContext extends StepOutcomeContext {
  result: unknown;
}

/** An undo the agent confirmed. */
export function compensationStepDone(
  record: StateRecord,
  ctx: CompensationStepDoneContext,
): TransitionResult {
  const refused = precheck(record, "compensationStepDone", ctx);
  if (refused) return refused;
  const step = record.steps[ctx.stepIndex];
  if (step?.undo?.status === "Succeeded") return unchanged(record);
  if (step?.undo?.status !== "Dispatched") {
    return refuse(
      record,
      "compensationStepDone",
      "StepOutOfOrder",
      `undo of step ${ctx.stepIndex} was not dispatched`,
    );
  }
  return commit(
    record,
    ctx.now,
    { event: "compensationStepDone", by: "scheduler", detail: step.name },
    (draft) => {
      const undo = draft.steps[ctx.stepIndex]!.undo!;
      undo.status = "Succeeded";
      undo.completedAt = ctx.now.toISOString();
      undo.result = ctx.result ?? null;
      undo.lastError = null;
      draft.parkedSince = null;
    },
  );
}

export interface CompensationStepFailedContext extends StepFailureContext {
  outcome: "transient" | "permanent";
}

/**
 * An undo that failed. Transient: end the attempt early so that the Supervisor retries it within its budget.
 * Permanent: nothing automatic can finish the undo, so the order is CompensationFailed and an operator is alerted.
 */
export function compensationStepFailed(
  record: StateRecord,
  ctx: CompensationStepFailedContext,
): TransitionResult {
  const refused = precheck(record, "compensationStepFailed", ctx);
  if (refused) return refused;
  const step = record.steps[ctx.stepIndex];
  if (step?.undo?.status !== "Dispatched") {
    return refuse(
      record,
      "compensationStepFailed",
      "StepOutOfOrder",
      `undo of step ${ctx.stepIndex} is not awaiting an answer`,
    );
  }
  const error: ErrorInfo = { ...ctx.error, at: ctx.now.toISOString() };
  return commit(
    record,
    ctx.now,
    {
      event: "compensationStepFailed",
      by: "scheduler",
      detail: `${step.name} (${ctx.outcome}): ${error.code}`,
    },
    (draft) => {
      const undo = draft.steps[ctx.stepIndex]!.undo!;
      undo.lastError = error;
      draft.lastError = error;
      if (ctx.outcome === "permanent") {
        undo.status = "Failed";
        draft.processState = "CompensationFailed";
        release(draft);
        decideAlert(
          draft,
          "CompensationFailed",
          `undo of ${step.name} refused: ${error.code}: ${error.message}`,
          ctx.now,
        );
      } else {
        draft.completeBy = error.at;
      }
    },
  );
}

/**
 * A compensation's next move after an undo succeeded: dispatch the next undo, or `compensated` when none is left.
 * Joined to `compensationStepDone` (andThen), the answer and the next move are one write instead of two.
 */
export function nextUndoMove(record: StateRecord, ctx: Omit<DispatchContext, "stepIndex">): TransitionResult {
  const stepIndex = nextUndoIndex(record);
  return stepIndex === -1
    ? compensated(record, ctx)
    : compensationStepDispatched(record, { ...ctx, stepIndex });
}

/** Every step that may have had an effect is undone: the order ends cleanly undone. */
export function compensated(record: StateRecord, ctx: FencedContext): TransitionResult {
  const refused = precheck(record, "compensated", ctx);
  if (refused) return refused;
  const pending = nextUndoIndex(record);
  if (pending !== -1) {
    return refuse(record, "compensated", "StepsIncomplete", `step ${pending} is not undone yet`);
  }
  return commit(record, ctx.now, { event: "compensated", by: "scheduler" }, (draft) => {
    draft.processState = "Compensated";
    release(draft);
  });
}
