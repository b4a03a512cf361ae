/**
 * Steps without undo (a read-only check, a notification), on the fixture whose second and last steps declare none
 * (test/support/fixtureWorkflows.ts): compensation never dispatches an undo for one, a refusal by one compensates
 * the steps before it, one in doubt needs nothing undone, and the audit trail records each it passes, once, in
 * the write that passes it.
 */
import { describe, expect, it } from "vitest";
import {
  andThen,
  claim,
  compensationStepDispatched,
  compensationStepDone,
  compensationStepFailed,
  nextUndoIndex,
  nextUndoMove,
  operatorCancel,
  operatorRetry,
  requestCompensation,
  stateRecordSchema,
  stepFailedPermanent,
  type StateRecord,
} from "../../../../src/domain";
import { at, ok, pendingRecord, processingRecord, sampleOrder } from "../../../support/domain";
import { FIXTURE_WITHOUT_UNDO, fixtureWorkflow } from "../../../support/fixtureWorkflows";
import { compensatingRecord, skippedSteps } from "./support";

const on = FIXTURE_WITHOUT_UNDO;
/** The steps by role: step1 and step3 are undone, step2 (a check) and step4 (a notification) are not. */
const [FIRST, CHECK, THIRD, NOTICE] = [0, 1, 2, 3];
const passed = (index: number) => `${on.steps[index]!.name}: no undo declared`;

/** Step `index` of a record whose earlier steps succeeded, refused for good. */
function refusedAt(index: number): StateRecord {
  const record = processingRecord(index, true, on);
  return ok(
    stepFailedPermanent(record, {
      now: at(20),
      lockedBy: record.lockedBy!,
      stepIndex: index,
      error: { code: "Refused", message: "no" },
    }),
  );
}

/** The undo of step `index` dispatched and confirmed, with the next move (andThen), as the reply path writes it. */
function undo(record: StateRecord, index: number, seconds: number): StateRecord {
  const lockedBy = record.lockedBy!;
  const dispatched = ok(
    compensationStepDispatched(record, {
      now: at(seconds),
      lockedBy,
      stepIndex: index,
      stepTimeoutSeconds: 30,
    }),
  );
  return ok(
    andThen(
      compensationStepDone(dispatched, { now: at(seconds + 1), lockedBy, stepIndex: index, result: null }),
      (r) => nextUndoMove(r, { now: at(seconds + 1), lockedBy, stepTimeoutSeconds: 30 }),
    ),
  );
}

const events = (record: StateRecord, from: number) =>
  record.history.slice(from).map((h) => [h.event, h.detail ?? null]);

describe("steps without undo", () => {
  it("are recorded as such; a record written before the field keeps every step undoable", () => {
    const record = pendingRecord(sampleOrder(), on);
    expect(record.steps.map((s) => s.undoable)).toEqual([true, false, true, false]);
    // As builds before steps could lack an undo wrote a record: no `undoable` on its steps. Each then has an undo,
    // as each step of theirs did, so a refusal of the third step undoes both before it.
    const withoutField = (r: StateRecord) =>
      stateRecordSchema.parse({ ...r, steps: r.steps.map(({ undoable: _dropped, ...step }) => step) });
    const older = withoutField(refusedAt(THIRD));
    expect(older.steps.map((s) => s.undoable)).toEqual([true, true, true, true]);
    expect(nextUndoIndex(older)).toBe(CHECK);
    expect(nextUndoIndex(refusedAt(THIRD))).toBe(FIRST);
  });

  it("a refusal by the check compensates the step before it, and the trail says the check was passed", () => {
    const refused = refusedAt(CHECK);
    expect(refused.processState).toBe("Compensating");
    expect(nextUndoIndex(refused)).toBe(FIRST);
    expect(events(refused, -2)).toEqual([
      ["stepFailedPermanent", `${on.steps[CHECK]!.name}: Refused`],
      ["compensationStepSkipped", passed(CHECK)],
    ]);
    expect(refused.history.at(-1)).toMatchObject({
      by: "scheduler",
      from: "Compensating",
      to: "Compensating",
    });
    const done = undo(refused, FIRST, 21);
    expect(done).toMatchObject({ processState: "Compensated", lockedBy: null });
    expect(done.steps.map((s) => s.undo?.status ?? null)).toEqual(["Succeeded", null, null, null]);
    expect(skippedSteps(done)).toEqual([passed(CHECK)]);
  });

  it("passes the check between two undos in the write that finishes the undo above it", () => {
    const refused = refusedAt(NOTICE);
    // The refused notification is passed as compensation begins; the third step is the first undo.
    expect(events(refused, -1)).toEqual([["compensationStepSkipped", passed(NOTICE)]]);
    expect(nextUndoIndex(refused)).toBe(THIRD);
    const third = undo(refused, THIRD, 21);
    expect(events(third, -4)).toEqual([
      ["compensationStepDispatched", on.steps[THIRD]!.name],
      ["compensationStepDone", on.steps[THIRD]!.name],
      ["compensationStepSkipped", passed(CHECK)],
      ["compensationStepDispatched", on.steps[FIRST]!.name],
    ]);
    const done = undo(third, FIRST, 30);
    expect(done.processState).toBe("Compensated");
    expect(skippedSteps(done)).toEqual([passed(NOTICE), passed(CHECK)]);
  });

  it("needs nothing undone for a check in doubt: a cancel undoes the step before it", () => {
    const inDoubt = processingRecord(CHECK, true, on);
    expect(inDoubt.steps[CHECK]!.status).toBe("Dispatched");
    const cancelled = ok(
      requestCompensation(inDoubt, { now: at(12), reason: "fraud", requestedBy: "policy" }),
    );
    expect(cancelled.processState).toBe("CompensationPending");
    expect(nextUndoIndex(cancelled)).toBe(FIRST);
    expect(cancelled.history.at(-1)).toMatchObject({
      event: "compensationStepSkipped",
      by: "policy",
      detail: passed(CHECK),
    });
  });

  it("ends Compensated at once when only steps without undo had an effect", () => {
    const checkFirst = fixtureWorkflow(2, [0]);
    const refused = processingRecord(1, true, checkFirst);
    const done = ok(
      stepFailedPermanent(refused, {
        now: at(20),
        lockedBy: refused.lockedBy!,
        stepIndex: 1,
        error: { code: "Refused", message: "no" },
      }),
    );
    expect(done).toMatchObject({ processState: "Compensated", lockedBy: null });
    expect(skippedSteps(done)).toEqual([`${checkFirst.steps[0]!.name}: no undo declared`]);
    const cancelled = ok(
      operatorCancel(processingRecord(1, false, checkFirst), { now: at(20), operator: "ana" }),
    );
    expect(cancelled.processState).toBe("Compensated");
    expect(cancelled.history.at(-1)).toMatchObject({ event: "compensationStepSkipped", by: "operator:ana" });
  });

  it("records each pass once, however many attempts the undos take", () => {
    const refused = compensatingRecord(on);
    const lockedBy = refused.lockedBy!;
    const dispatched = ok(
      compensationStepDispatched(refused, {
        now: at(21),
        lockedBy,
        stepIndex: THIRD,
        stepTimeoutSeconds: 30,
      }),
    );
    const failed = ok(
      compensationStepFailed(dispatched, {
        now: at(22),
        lockedBy,
        stepIndex: THIRD,
        outcome: "permanent",
        error: { code: "Refused", message: "no" },
      }),
    );
    expect(failed.processState).toBe("CompensationFailed");
    const retried = ok(operatorRetry(failed, { now: at(100), operator: "ana" }));
    const again = ok(claim(retried, { now: at(101), claimTimeoutSeconds: 60 }));
    const done = undo(undo(again, THIRD, 102), FIRST, 110);
    expect(done.processState).toBe("Compensated");
    expect(skippedSteps(done)).toEqual([passed(NOTICE), passed(CHECK)]);
  });
});
