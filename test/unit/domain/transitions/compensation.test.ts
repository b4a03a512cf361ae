import { describe, expect, it } from "vitest";
import {
  compensated,
  compensationStepDispatched,
  compensationStepDone,
  compensationStepFailed,
  hasUndo,
  nextUndoIndex,
  operatorCancel,
  processed,
  requestCompensation,
  stepSucceeded,
} from "../../../../src/domain";
import { at, ok, pendingRecord, processingRecord } from "../../../support/domain";
import { FIXTURE_WITHOUT_UNDO } from "../../../support/fixtureWorkflows";
import {
  STEPS,
  refusal,
  compensatingRecord,
  skippedSteps,
  undoOfStep1Failed,
  undosBelow,
  workflow,
} from "./support";

// On the builders' fixture, and on one whose second and last steps declare no undo: compensation passes those.
describe.each([workflow, FIXTURE_WITHOUT_UNDO].map((on) => ({ on, name: on.name })))(
  "compensation steps, $name",
  ({ on }) => {
    it("undoes in reverse order, passing the steps without undo, and ends Compensated", () => {
      let record = compensatingRecord(on);
      const lockedBy = record.lockedBy!;
      const last = on.steps.length - 1;
      const newestFirst = undosBelow(on, last);
      expect(
        refusal(
          compensationStepDispatched(record, { now: at(21), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }),
        ).code,
      ).toBe("StepOutOfOrder");
      for (const [i, index] of newestFirst.entries()) {
        record = ok(
          compensationStepDispatched(record, {
            now: at(21 + i),
            lockedBy,
            stepIndex: index,
            stepTimeoutSeconds: 30,
          }),
        );
        expect(record.completeBy).toBe(at(51 + i).toISOString());
        expect(
          compensationStepDispatched(record, {
            now: at(25),
            lockedBy,
            stepIndex: index,
            stepTimeoutSeconds: 30,
          }),
        ).toMatchObject({ ok: true, changed: false });
        expect(refusal(compensated(record, { now: at(22), lockedBy })).code).toBe("StepsIncomplete");
        record = ok(
          compensationStepDone(record, {
            now: at(22 + i),
            lockedBy,
            stepIndex: index,
            result: { undone: index },
          }),
        );
        expect(
          compensationStepDone(record, { now: at(23), lockedBy, stepIndex: index, result: null }),
        ).toMatchObject({ ok: true, changed: false });
      }
      const done = ok(compensated(record, { now: at(30), lockedBy }));
      expect(done).toMatchObject({ processState: "Compensated", lockedBy: null, completeBy: null });
      // Each step without undo it reached (the refused last one too) is in the trail, once, highest first.
      const passed = on.steps.flatMap((s) => (hasUndo(s) ? [] : [`${s.name}: no undo declared`])).reverse();
      expect(skippedSteps(done)).toEqual(passed);
      expect(done.steps.map((s) => s.undo?.status ?? null)).toEqual(
        on.steps.map((s, i) => (i < last && hasUndo(s) ? "Succeeded" : null)),
      );
    });

    it("refuses an undo outcome for an undo never dispatched", () => {
      const record = compensatingRecord(on);
      const lockedBy = record.lockedBy!;
      expect(
        refusal(compensationStepDone(record, { now: at(21), lockedBy, stepIndex: 1, result: null })).code,
      ).toBe("StepOutOfOrder");
      expect(
        refusal(
          compensationStepFailed(record, {
            now: at(21),
            lockedBy,
            stepIndex: 1,
            outcome: "permanent",
            error: { code: "x", message: "" },
          }),
        ).code,
      ).toBe("StepOutOfOrder");
    });
  },
);

describe("a failed undo", () => {
  it("ends the attempt early on a transient undo failure", () => {
    const failed = undoOfStep1Failed("transient", { code: "Unavailable", message: "503" });
    expect(failed).toMatchObject({ processState: "Compensating", completeBy: at(22).toISOString() });
  });

  it("ends CompensationFailed on a permanent undo failure", () => {
    const failed = undoOfStep1Failed("permanent", { code: "RefundRefused", message: "card closed" });
    expect(failed).toMatchObject({ processState: "CompensationFailed", lockedBy: null, completeBy: null });
    expect(failed.steps[1]!.undo).toMatchObject({ status: "Failed", lastError: { code: "RefundRefused" } });
  });
});

describe("requestCompensation", () => {
  it("compensates at once an order with nothing done", () => {
    const result = ok(
      requestCompensation(pendingRecord(), { now: at(1), reason: "policy", requestedBy: "policy" }),
    );
    expect(result.processState).toBe("Compensated");
  });

  it("releases a running attempt's lock and counts an in-doubt step as needing undo", () => {
    const record = processingRecord(1, true);
    const result = ok(requestCompensation(record, { now: at(12), reason: "fraud", requestedBy: "policy" }));
    expect(result).toMatchObject({ processState: "CompensationPending", lockedBy: null, completeBy: null });
    expect(nextUndoIndex(result)).toBe(1);
    // The running attempt is fenced off from now on.
    expect(
      refusal(
        stepSucceeded(result, {
          now: at(13),
          lockedBy: record.lockedBy!,
          stepIndex: 1,
          result: 1,
          compensation: 1,
        }),
      ).code,
    ).toBe("NotLockHolder");
  });

  it("refuses a second request and requests from terminal states", () => {
    const pendingUndo = ok(
      requestCompensation(processingRecord(1), { now: at(12), reason: "x", requestedBy: "policy" }),
    );
    expect(
      refusal(requestCompensation(pendingUndo, { now: at(13), reason: "x", requestedBy: "policy" })).code,
    ).toBe("AlreadyCompensating");
    const done = processingRecord(STEPS);
    const finished = ok(processed(done, { now: at(20), lockedBy: done.lockedBy! }));
    expect(
      refusal(requestCompensation(finished, { now: at(21), reason: "x", requestedBy: "policy" })).code,
    ).toBe("WrongState");
    expect(refusal(operatorCancel(finished, { now: at(21), operator: "ana" })).code).toBe("WrongState");
  });
});
