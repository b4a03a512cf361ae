import { stepFailedPermanent, type StateRecord, type TransitionResult } from "../../../../src/domain";
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

/** A Compensating record after the last step was declined: every earlier step to undo, held by attempt 1. */
export function compensatingRecord(): StateRecord {
  const record = processingRecord(LAST, true);
  return ok(
    stepFailedPermanent(record, {
      now: at(20),
      lockedBy: record.lockedBy!,
      stepIndex: LAST,
      error: { code: "Declined", message: "no courier" },
    }),
  );
}
