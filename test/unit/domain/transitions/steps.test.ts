import { describe, expect, it } from "vitest";
import {
  andThen,
  compensationStepDispatched,
  compensationStepDone,
  nextForwardMove,
  nextUndoIndex,
  nextUndoMove,
  processed,
  refuse,
  stepDispatched,
  stepFailedPermanent,
  stepFailedTransient,
  stepSucceeded,
  type StateRecord,
} from "../../../../src/domain";
import { at, claimedRecord, ok, processingRecord } from "../../../support/domain";
import { STEPS, LAST, refusal, compensatingRecord } from "./support";

describe("forward steps", () => {
  it("records a dispatch with the step's deadline, and keeps the first deadline on a same-attempt repeat", () => {
    const record = claimedRecord();
    const lockedBy = record.lockedBy!;
    const first = ok(stepDispatched(record, { now: at(2), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }));
    expect(first.steps[0]).toMatchObject({ status: "Dispatched", completeBy: at(32).toISOString() });
    expect(first.completeBy).toBe(at(32).toISOString());
    const again = stepDispatched(first, { now: at(5), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 });
    expect(again).toMatchObject({ ok: true, changed: false });
  });

  it("fences every write: a stale attempt is refused", () => {
    const record = claimedRecord();
    const stale = "ORD-1001:0";
    expect(
      refusal(stepDispatched(record, { now: at(2), lockedBy: stale, stepIndex: 0, stepTimeoutSeconds: 30 }))
        .code,
    ).toBe("NotLockHolder");
    const dispatched = processingRecord(0, true);
    expect(
      refusal(
        stepSucceeded(dispatched, { now: at(3), lockedBy: stale, stepIndex: 0, result: 1, compensation: 1 }),
      ).code,
    ).toBe("NotLockHolder");
    expect(
      refusal(
        stepFailedTransient(dispatched, {
          now: at(3),
          lockedBy: stale,
          stepIndex: 0,
          error: { code: "x", message: "" },
        }),
      ).code,
    ).toBe("NotLockHolder");
    expect(refusal(processed(processingRecord(STEPS), { now: at(9), lockedBy: stale })).code).toBe(
      "NotLockHolder",
    );
  });

  it("refuses a step out of order", () => {
    const record = claimedRecord();
    const r = refusal(
      stepDispatched(record, {
        now: at(2),
        lockedBy: record.lockedBy!,
        stepIndex: 1,
        stepTimeoutSeconds: 30,
      }),
    );
    expect(r).toMatchObject({ code: "StepOutOfOrder" });
  });

  it("records success with result and compensation data; a duplicate reply changes nothing", () => {
    const record = processingRecord(0, true);
    const ctx = {
      now: at(11),
      lockedBy: record.lockedBy!,
      stepIndex: 0,
      result: { r: 1 },
      compensation: { c: 1 },
    };
    const done = ok(stepSucceeded(record, ctx));
    expect(done.steps[0]).toMatchObject({ status: "Succeeded", result: { r: 1 }, compensation: { c: 1 } });
    expect(stepSucceeded(done, ctx)).toMatchObject({ ok: true, changed: false });
  });

  it("records a success and the next move in one write (andThen): the next dispatch, or Processed after the last", () => {
    const success = (record: StateRecord, stepIndex: number) =>
      stepSucceeded(record, {
        now: at(11),
        lockedBy: record.lockedBy!,
        stepIndex,
        result: { r: stepIndex },
        compensation: null,
      });
    const move = (r: StateRecord) =>
      nextForwardMove(r, { now: at(11), lockedBy: r.lockedBy!, stepTimeoutSeconds: 30 });
    const first = processingRecord(0, true);
    const joined = ok(andThen(success(first, 0), move));
    expect(joined.steps.map((s) => s.status)).toEqual([
      "Succeeded",
      "Dispatched",
      ...Array<string>(STEPS - 2).fill("Pending"),
    ]);
    expect(joined.completeBy).toBe(at(41).toISOString());
    expect(joined.history.slice(-2).map((h) => h.event)).toEqual(["stepSucceeded", "stepDispatched"]);
    // The same as two writes would have left it.
    expect(joined).toEqual(ok(move(ok(success(first, 0)))));

    const last = ok(andThen(success(processingRecord(LAST, true), LAST), move));
    expect(last).toMatchObject({ processState: "Processed", lockedBy: null, completeBy: null });
    expect(last.history.slice(-2).map((h) => h.event)).toEqual(["stepSucceeded", "processed"]);

    // A duplicate answer writes nothing and moves nothing; a refused next move leaves the first alone.
    expect(andThen(success(joined, 0), move)).toMatchObject({ ok: true, changed: false });
    const refusedNext = andThen(success(first, 0), (r) => refuse(r, "test", "WrongState", "no"));
    expect(refusedNext).toEqual(success(first, 0));
  });

  it("records an undo's success and the next undo (or Compensated) in one write, as two writes would", () => {
    const undone = (record: StateRecord, stepIndex: number) =>
      compensationStepDone(record, { now: at(30), lockedBy: record.lockedBy!, stepIndex, result: null });
    const move = (r: StateRecord) =>
      nextUndoMove(r, { now: at(30), lockedBy: r.lockedBy!, stepTimeoutSeconds: 30 });
    // Every step before the last to undo, newest first: the one before the last's undo dispatched.
    const compensating = compensatingRecord();
    const first = ok(
      compensationStepDispatched(compensating, {
        now: at(21),
        lockedBy: compensating.lockedBy!,
        stepIndex: LAST - 1,
        stepTimeoutSeconds: 30,
      }),
    );
    const joined = ok(andThen(undone(first, LAST - 1), move));
    expect(joined.steps.map((s) => s.undo?.status ?? null)).toEqual([
      ...Array<null>(LAST - 2).fill(null),
      "Dispatched",
      "Succeeded",
      null,
    ]);
    expect(joined).toEqual(ok(move(ok(undone(first, LAST - 1)))));
    let rest = joined;
    for (let index = LAST - 2; index > 0; index--) rest = ok(andThen(undone(rest, index), move));
    const last = ok(andThen(undone(rest, 0), move));
    expect(last).toMatchObject({ processState: "Compensated", lockedBy: null });
    expect(last.history.slice(-2).map((h) => h.event)).toEqual(["compensationStepDone", "compensated"]);
  });

  it("refuses success for a step that was never dispatched", () => {
    const record = claimedRecord();
    const r = refusal(
      stepSucceeded(record, {
        now: at(2),
        lockedBy: record.lockedBy!,
        stepIndex: 0,
        result: 1,
        compensation: 1,
      }),
    );
    expect(r.code).toBe("StepOutOfOrder");
  });

  it("ends the attempt early on a transient failure, leaving the decision to the Supervisor", () => {
    const record = processingRecord(1, true);
    const failed = ok(
      stepFailedTransient(record, {
        now: at(12),
        lockedBy: record.lockedBy!,
        stepIndex: 1,
        error: { code: "Unavailable", message: "503" },
      }),
    );
    expect(failed).toMatchObject({
      processState: "Processing",
      completeBy: at(12).toISOString(),
      failureCount: 0,
    });
    expect(failed.steps[1]).toMatchObject({ status: "Dispatched", lastError: { code: "Unavailable" } });
    expect(
      refusal(
        stepFailedTransient(processingRecord(1), {
          now: at(12),
          lockedBy: record.lockedBy!,
          stepIndex: 1,
          error: { code: "x", message: "" },
        }),
      ).code,
    ).toBe("StepOutOfOrder");
  });

  it("turns a permanent failure into compensation of the earlier steps, by the same attempt", () => {
    const record = compensatingRecord();
    expect(record).toMatchObject({ processState: "Compensating", lockedBy: "ORD-1001:1" });
    expect(record.steps[LAST]!.status).toBe("Failed");
    expect(record.compensationRequest).toMatchObject({ requestedBy: "scheduler" });
    expect(nextUndoIndex(record)).toBe(LAST - 1);
  });

  it("is Compensated at once when the first step is declined", () => {
    const record = processingRecord(0, true);
    const result = ok(
      stepFailedPermanent(record, {
        now: at(11),
        lockedBy: record.lockedBy!,
        stepIndex: 0,
        error: { code: "OutOfStock", message: "SKU-1" },
      }),
    );
    expect(result).toMatchObject({ processState: "Compensated", lockedBy: null, completeBy: null });
  });

  it("refuses a permanent failure for a step not awaiting an answer", () => {
    const record = processingRecord(1);
    const r = refusal(
      stepFailedPermanent(record, {
        now: at(11),
        lockedBy: record.lockedBy!,
        stepIndex: 1,
        error: { code: "x", message: "" },
      }),
    );
    expect(r.code).toBe("StepOutOfOrder");
  });

  it("marks Processed only when every step succeeded, and releases the lock", () => {
    const record = processingRecord(STEPS);
    expect(ok(processed(record, { now: at(20), lockedBy: record.lockedBy! }))).toMatchObject({
      processState: "Processed",
      lockedBy: null,
      completeBy: null,
    });
    const partial = processingRecord(LAST);
    expect(refusal(processed(partial, { now: at(20), lockedBy: partial.lockedBy! })).code).toBe(
      "StepsIncomplete",
    );
  });

  it("refuses forward writes once the record is compensating", () => {
    const record = compensatingRecord();
    const r = refusal(
      stepDispatched(record, {
        now: at(21),
        lockedBy: record.lockedBy!,
        stepIndex: LAST,
        stepTimeoutSeconds: 30,
      }),
    );
    expect(r.code).toBe("WrongState");
  });
});
