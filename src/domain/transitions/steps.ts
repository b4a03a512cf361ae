import { agentRequestId } from "../ids";
import { nextStepIndex, nextUndoIndex, type ErrorInfo, type StateRecord, type Step } from "../stateRecord";
import { addSeconds, checkFence, commit, refuse, release, unchanged, type TransitionResult } from "./result";

/** Every write by an orchestration names the attempt (its instance id) it speaks for. */
export interface FencedContext {
  now: Date;
  lockedBy: string;
}

export interface DispatchContext extends FencedContext {
  stepIndex: number;
  stepTimeoutSeconds: number;
}

export interface StepOutcomeContext extends FencedContext {
  stepIndex: number;
}

export interface StepSuccessContext extends StepOutcomeContext {
  result: unknown;
  compensation: unknown;
}

export interface StepFailureContext extends StepOutcomeContext {
  error: Omit<ErrorInfo, "at">;
}

function precheck(
  record: StateRecord,
  transition: string,
  ctx: FencedContext,
  state: StateRecord["processState"],
): TransitionResult | null {
  const fenced = checkFence(record, transition, ctx.lockedBy);
  if (fenced) return fenced;
  if (record.processState !== state) {
    return refuse(record, transition, "WrongState", `expected ${state}, found ${record.processState}`);
  }
  return null;
}

function stepLabel(record: StateRecord, index: number): string {
  return `step ${index} (${record.steps[index]?.name ?? "unknown"})`;
}

/**
 * The Scheduler records that it is about to send a step's request, and its deadline. Recording before sending
 * is what lets the Supervisor see a step that never answered. A repeat by the same attempt (a re-run activity)
 * keeps the first deadline, so the orchestration's timer and the store agree.
 */
export function stepDispatched(record: StateRecord, ctx: DispatchContext): TransitionResult {
  const refused = precheck(record, "stepDispatched", ctx, "Processing");
  if (refused) return refused;
  const expected = nextStepIndex(record);
  if (ctx.stepIndex !== expected) {
    return refuse(
      record,
      "stepDispatched",
      "StepOutOfOrder",
      `next step is ${expected}, not ${ctx.stepIndex}`,
    );
  }
  const step = record.steps[expected]!;
  if (step.status === "Dispatched" && step.dispatchedInAttempt === record.attempt) return unchanged(record);
  if (step.status !== "Pending" && step.status !== "Dispatched") {
    return refuse(
      record,
      "stepDispatched",
      "StepOutOfOrder",
      `${stepLabel(record, expected)} is ${step.status}`,
    );
  }
  return commit(record, ctx.now, { event: "stepDispatched", by: "scheduler", detail: step.name }, (draft) => {
    const s = draft.steps[expected]!;
    s.status = "Dispatched";
    s.dispatchedAt = ctx.now.toISOString();
    s.completeBy = addSeconds(ctx.now, ctx.stepTimeoutSeconds);
    s.dispatchedInAttempt = draft.attempt;
    s.requestId = agentRequestId(ctx.lockedBy, expected, "do");
    draft.completeBy = s.completeBy;
  });
}

/** An agent's "ok": the step is done, and what its undo needs is durable before the next step starts. */
export function stepSucceeded(record: StateRecord, ctx: StepSuccessContext): TransitionResult {
  const refused = precheck(record, "stepSucceeded", ctx, "Processing");
  if (refused) return refused;
  const step = record.steps[ctx.stepIndex];
  if (step?.status === "Succeeded") return unchanged(record);
  if (step?.status !== "Dispatched") {
    return refuse(
      record,
      "stepSucceeded",
      "StepOutOfOrder",
      `${stepLabel(record, ctx.stepIndex)} was not dispatched`,
    );
  }
  return commit(record, ctx.now, { event: "stepSucceeded", by: "scheduler", detail: step.name }, (draft) => {
    const s = draft.steps[ctx.stepIndex]!;
    s.status = "Succeeded";
    s.completedAt = ctx.now.toISOString();
    s.result = ctx.result ?? null;
    s.compensation = ctx.compensation ?? null;
    s.lastError = null;
    // The service answered: whatever outage the order waited out is over for it.
    draft.parkedSince = null;
  });
}

/** The dispatched step a failure reply is about, or the refusal when the attempt is not waiting for it. */
function awaitingAnswer(
  record: StateRecord,
  transition: string,
  ctx: StepOutcomeContext,
): TransitionResult | Step {
  const refused = precheck(record, transition, ctx, "Processing");
  if (refused) return refused;
  const step = record.steps[ctx.stepIndex];
  if (step?.status !== "Dispatched") {
    return refuse(
      record,
      transition,
      "StepOutOfOrder",
      `${stepLabel(record, ctx.stepIndex)} is not awaiting an answer`,
    );
  }
  return step;
}

/**
 * A transient failure the agent could not absorb within its deadline. The Scheduler does not retry on its own:
 * it ends the attempt early (completeBy = now) so that the Supervisor, which owns failureCount, decides.
 */
export function stepFailedTransient(record: StateRecord, ctx: StepFailureContext): TransitionResult {
  const awaiting = awaitingAnswer(record, "stepFailedTransient", ctx);
  if ("ok" in awaiting) return awaiting;
  const step = awaiting;
  const error: ErrorInfo = { ...ctx.error, at: ctx.now.toISOString() };
  return commit(
    record,
    ctx.now,
    { event: "stepFailedTransient", by: "scheduler", detail: `${step.name}: ${error.code}` },
    (draft) => {
      draft.steps[ctx.stepIndex]!.lastError = error;
      draft.lastError = error;
      draft.completeBy = error.at;
    },
  );
}

/**
 * A permanent business refusal (e.g. payment declined). The step had no effect; the same orchestration keeps
 * its lock and turns to undoing the steps before it. With nothing to undo the order is Compensated at once.
 */
export function stepFailedPermanent(record: StateRecord, ctx: StepFailureContext): TransitionResult {
  const awaiting = awaitingAnswer(record, "stepFailedPermanent", ctx);
  if ("ok" in awaiting) return awaiting;
  const step = awaiting;
  const error: ErrorInfo = { ...ctx.error, at: ctx.now.toISOString() };
  return commit(
    record,
    ctx.now,
    { event: "stepFailedPermanent", by: "scheduler", detail: `${step.name}: ${error.code}` },
    (draft) => {
      const s = draft.steps[ctx.stepIndex]!;
      s.status = "Failed";
      s.lastError = error;
      draft.lastError = error;
      draft.compensationRequest = {
        reason: `${step.name}: ${error.message}`,
        requestedBy: "scheduler",
        at: error.at,
      };
      if (nextUndoIndex(draft) === -1) {
        draft.processState = "Compensated";
        release(draft);
      } else {
        draft.processState = "Compensating";
      }
    },
  );
}

/**
 * A forward attempt's next move after a step succeeded: dispatch the next step, or `processed` when none is left.
 * Joined to `stepSucceeded` (andThen), the answer and the next move are one write instead of two.
 */
export function nextForwardMove(
  record: StateRecord,
  ctx: Omit<DispatchContext, "stepIndex">,
): TransitionResult {
  const stepIndex = nextStepIndex(record);
  return stepIndex === -1 ? processed(record, ctx) : stepDispatched(record, { ...ctx, stepIndex });
}

/** Every step succeeded: the order is done and the lock is released. */
export function processed(record: StateRecord, ctx: FencedContext): TransitionResult {
  const refused = precheck(record, "processed", ctx, "Processing");
  if (refused) return refused;
  const pending = nextStepIndex(record);
  if (pending !== -1) {
    return refuse(record, "processed", "StepsIncomplete", `${stepLabel(record, pending)} has not succeeded`);
  }
  return commit(record, ctx.now, { event: "processed", by: "scheduler" }, (draft) => {
    draft.processState = "Processed";
    release(draft);
    draft.lastError = null;
  });
}
