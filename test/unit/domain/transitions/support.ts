import {
  COMPENSATION_STEP_SKIPPED,
  compensationStepDispatched,
  compensationStepFailed,
  hasUndo,
  stepFailedPermanent,
  type StateRecord,
  type TransitionResult,
  type WorkflowDefinition,
} from "../../../../src/domain";
import { at, ok, processingRecord } from "../../../support/domain";
import { FIXTURE_3 } from "../../../support/fixtureWorkflows";

/**
 * Builders shared by the tests of src/domain/transitions/, one file per module.
 *
 * The records below are on the builders' default workflow, a three-step fixture (test/support/fixtureWorkflows.ts),
 * not the sample process: submission.test.ts's first test checks it is this one. Undo indices in these tests (1,
 * then 0) are its own.
 */
export const workflow = FIXTURE_3;
export const STEPS = workflow.steps.length;
export const LAST = STEPS - 1;

export const expireCtx = (record: StateRecord, seconds: number, maxFailures = 3) => ({
  now: at(seconds),
  expectedLockedBy: record.lockedBy!,
  maxFailures,
  backoffSeconds: 10,
});

export function refusal(result: TransitionResult) {
  if (result.ok) throw new Error(`expected a refusal, got ${result.record.processState}`);
  return result.refusal;
}

/**
 * A Compensating record after the last step was declined: every earlier step to undo (or, without undo, to pass),
 * held by attempt 1. On `on`, the builders' workflow unless a test runs on another fixture.
 */
export function compensatingRecord(on: WorkflowDefinition = workflow): StateRecord {
  const last = on.steps.length - 1;
  const record = processingRecord(last, true, on);
  return ok(
    stepFailedPermanent(record, {
      now: at(20),
      lockedBy: record.lockedBy!,
      stepIndex: last,
      error: { code: "Declined", message: "no courier" },
    }),
  );
}

/** The `detail` of the audit entries that say compensation passed a step without undo, in the order written. */
export const skippedSteps = (record: StateRecord): string[] =>
  record.history.filter((h) => h.event === COMPENSATION_STEP_SKIPPED).map((h) => h.detail ?? "");

/** The indices of `on`'s steps that declare an undo, below `below`, highest first: compensation's undos. */
export const undosBelow = (on: WorkflowDefinition, below: number): number[] =>
  on.steps.flatMap((s, i) => (i < below && hasUndo(s) ? [i] : [])).reverse();

/**
 * `compensatingRecord()` with the undo of step 1 dispatched at 21 s and failed at 22 s: a transient failure ends the
 * attempt early, a permanent one ends the order CompensationFailed.
 */
export function undoOfStep1Failed(
  outcome: "transient" | "permanent",
  error: { code: string; message: string },
): StateRecord {
  const r = compensatingRecord();
  const dispatched = ok(
    compensationStepDispatched(r, {
      now: at(21),
      lockedBy: r.lockedBy!,
      stepIndex: 1,
      stepTimeoutSeconds: 30,
    }),
  );
  return ok(
    compensationStepFailed(dispatched, {
      now: at(22),
      lockedBy: dispatched.lockedBy!,
      stepIndex: 1,
      outcome,
      error,
    }),
  );
}
