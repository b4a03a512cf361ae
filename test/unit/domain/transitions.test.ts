import { describe, expect, it } from "vitest";
import {
  alertSent,
  andThen,
  HISTORY_LIMIT,
  acceptResubmission,
  backoffSeconds,
  claim,
  compensated,
  compensationStepDispatched,
  compensationStepDone,
  compensationStepFailed,
  expire,
  nextForwardMove,
  nextUndoIndex,
  nextUndoMove,
  operatorCancel,
  operatorRetry,
  processed,
  refuse,
  requestCompensation,
  stateRecordSchema,
  stepDispatched,
  stepFailedPermanent,
  stepFailedTransient,
  stepSucceeded,
  type StateRecord,
  type TransitionResult,
} from "../../../src/domain";
import {
  T0,
  at,
  claimedRecord,
  ok,
  pendingRecord,
  processingRecord,
  sampleOrder,
} from "../../support/domain";
import { FIXTURE_3 } from "../../support/fixtureWorkflows";

/**
 * The records below are on the builders' default workflow, a three-step fixture (test/support/fixtureWorkflows.ts),
 * not the sample process: the first test checks it is this one. Undo indices below (1, then 0) are its own.
 */
const workflow = FIXTURE_3;
const STEPS = workflow.steps.length;
const LAST = STEPS - 1;

const expireCtx = (record: StateRecord, seconds: number, maxFailures = 3) => ({
  now: at(seconds),
  expectedLockedBy: record.lockedBy!,
  maxFailures,
  backoffSeconds: 10,
});

function refusal(result: TransitionResult) {
  if (result.ok) throw new Error(`expected a refusal, got ${result.record.processState}`);
  return result.refusal;
}

/** A Compensating record after the last step was declined: every earlier step to undo, held by attempt 1. */
function compensatingRecord(): StateRecord {
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

describe("submit and resubmission", () => {
  it("creates a Pending, unlocked record with every step not started", () => {
    const record = pendingRecord();
    expect(stateRecordSchema.parse(record)).toBeTruthy();
    expect(record).toMatchObject({
      id: "ORD-1001",
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      failureCount: 0,
      attempt: 0,
      replyTo: "status-demo",
      workflow: { name: workflow.name, version: workflow.version },
    });
    expect(record.steps.map((s) => [s.name, s.agent, s.status])).toEqual(
      workflow.steps.map((s) => [s.name, s.agent, "Pending"]),
    );
    expect(record.history).toHaveLength(1);
  });

  it("accepts the same order again as a no-op, whatever its state", () => {
    const result = acceptResubmission(processingRecord(1), sampleOrder());
    expect(result).toMatchObject({ ok: true, changed: false });
  });

  it("refuses different data for a known orderId as OrderConflict", () => {
    const r = refusal(acceptResubmission(pendingRecord(), sampleOrder({ customerId: "C-99" })));
    expect(r.code).toBe("OrderConflict");
    expect(r.reason).toContain("ORD-1001");
  });
});

describe("claim", () => {
  it("moves Pending to Processing with attempt+1, lockedBy and a claim deadline", () => {
    const record = ok(claim(pendingRecord(), { now: at(1), claimTimeoutSeconds: 60 }));
    expect(record).toMatchObject({
      processState: "Processing",
      attempt: 1,
      lockedBy: "ORD-1001:1",
      completeBy: at(61).toISOString(),
      retryAt: null,
    });
  });

  it("moves CompensationPending to Compensating", () => {
    const cancelled = ok(operatorCancel(processingRecord(1), { now: at(5), operator: "ana" }));
    expect(cancelled.processState).toBe("CompensationPending");
    const record = ok(claim(cancelled, { now: at(6), claimTimeoutSeconds: 60 }));
    expect(record).toMatchObject({ processState: "Compensating", attempt: 2, lockedBy: "ORD-1001:2" });
  });

  it("refuses a record that is not claimable", () => {
    expect(refusal(claim(claimedRecord(), { now: at(2), claimTimeoutSeconds: 60 })).code).toBe("WrongState");
  });

  it("refuses a record whose retryAt is in the future", () => {
    const record = { ...pendingRecord(), retryAt: at(100).toISOString() };
    expect(refusal(claim(record, { now: at(99), claimTimeoutSeconds: 60 })).code).toBe("NotDue");
    expect(claim(record, { now: at(100), claimTimeoutSeconds: 60 }).ok).toBe(true);
  });

  it("refuses a Pending record that still names a lock holder", () => {
    const record = { ...pendingRecord(), lockedBy: "ORD-1001:7" };
    expect(refusal(claim(record, { now: at(1), claimTimeoutSeconds: 60 })).code).toBe("NotLockHolder");
  });
});

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

describe("compensation steps", () => {
  it("undoes in reverse order and ends Compensated", () => {
    let record = compensatingRecord();
    const lockedBy = record.lockedBy!;
    expect(
      refusal(
        compensationStepDispatched(record, { now: at(21), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }),
      ).code,
    ).toBe("StepOutOfOrder");
    const newestFirst = Array.from({ length: LAST }, (_, i) => LAST - 1 - i);
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
    expect(ok(compensated(record, { now: at(30), lockedBy }))).toMatchObject({
      processState: "Compensated",
      lockedBy: null,
      completeBy: null,
    });
  });

  it("refuses an undo outcome for an undo never dispatched", () => {
    const record = compensatingRecord();
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

  it("ends the attempt early on a transient undo failure", () => {
    const dispatched = (() => {
      const r = compensatingRecord();
      return ok(
        compensationStepDispatched(r, {
          now: at(21),
          lockedBy: r.lockedBy!,
          stepIndex: 1,
          stepTimeoutSeconds: 30,
        }),
      );
    })();
    const failed = ok(
      compensationStepFailed(dispatched, {
        now: at(22),
        lockedBy: dispatched.lockedBy!,
        stepIndex: 1,
        outcome: "transient",
        error: { code: "Unavailable", message: "503" },
      }),
    );
    expect(failed).toMatchObject({ processState: "Compensating", completeBy: at(22).toISOString() });
  });

  it("ends CompensationFailed on a permanent undo failure", () => {
    const r = compensatingRecord();
    const dispatched = ok(
      compensationStepDispatched(r, {
        now: at(21),
        lockedBy: r.lockedBy!,
        stepIndex: 1,
        stepTimeoutSeconds: 30,
      }),
    );
    const failed = ok(
      compensationStepFailed(dispatched, {
        now: at(22),
        lockedBy: dispatched.lockedBy!,
        stepIndex: 1,
        outcome: "permanent",
        error: { code: "RefundRefused", message: "card closed" },
      }),
    );
    expect(failed).toMatchObject({ processState: "CompensationFailed", lockedBy: null, completeBy: null });
    expect(failed.steps[1]!.undo).toMatchObject({ status: "Failed", lastError: { code: "RefundRefused" } });
  });
});

describe("expire (Supervisor)", () => {
  it("refuses before completeBy, for another lock holder, and outside locked states", () => {
    const record = claimedRecord(at(1));
    expect(refusal(expire(record, expireCtx(record, 60))).code).toBe("NotExpired");
    expect(refusal(expire(record, { ...expireCtx(record, 62), expectedLockedBy: "ORD-1001:9" })).code).toBe(
      "NotLockHolder",
    );
    expect(refusal(expire(pendingRecord(), { ...expireCtx(record, 62) })).code).toBe("WrongState");
  });

  it("sends an expired attempt back to Pending with a growing back-off, then Error past the limit", () => {
    let record = claimedRecord(at(1));
    let now = 0;
    const retryDelays: number[] = [];
    for (let failure = 1; failure <= 3; failure++) {
      now = Date.parse(record.completeBy!) / 1000 - T0.getTime() / 1000 + 1;
      record = ok(expire(record, expireCtx(record, now)));
      expect(record).toMatchObject({
        processState: "Pending",
        failureCount: failure,
        lockedBy: null,
        completeBy: null,
      });
      retryDelays.push((Date.parse(record.retryAt!) - at(now).getTime()) / 1000);
      record = ok(claim(record, { now: new Date(record.retryAt!), claimTimeoutSeconds: 60 }));
    }
    expect(retryDelays).toEqual([10, 20, 40]);
    now = Date.parse(record.completeBy!) / 1000 - T0.getTime() / 1000 + 1;
    record = ok(expire(record, expireCtx(record, now)));
    expect(record).toMatchObject({ processState: "Error", failureCount: 4, lockedBy: null, retryAt: null });
    expect(record.lastError?.code).toBe("RetriesExhausted");
    // The alert is decided in the same write, to be sent after it.
    expect(record.alert).toEqual({
      kind: "Error",
      reason: record.lastError!.message,
      messageId: `ORD-1001:4:Error`,
      decidedAt: at(now).toISOString(),
      sentAt: null,
    });
  });

  it("marks a decided alert sent once; an operator retry drops one a crash left unsent", () => {
    let record = claimedRecord(at(1));
    record = ok(expire(record, { ...expireCtx(record, 100), maxFailures: 0 }));
    const messageId = record.alert!.messageId;
    expect(refusal(alertSent(record, { now: at(101), messageId: "other", by: "supervisor" })).code).toBe(
      "WrongState",
    );
    const sent = ok(alertSent(record, { now: at(101), messageId, by: "scheduler" }));
    expect(sent.alert).toMatchObject({ messageId, sentAt: at(101).toISOString() });
    expect(sent.history.at(-1)).toMatchObject({
      event: "alertSent",
      by: "scheduler",
      from: "Error",
      to: "Error",
    });
    expect(alertSent(sent, { now: at(102), messageId, by: "supervisor" })).toMatchObject({
      ok: true,
      changed: false,
    });
    const retried = ok(operatorRetry(record, { now: at(103), operator: "ada" }));
    expect(retried.alert).toBeNull();
  });

  it("counts compensation failures apart and ends CompensationFailed past the limit", () => {
    let record = compensatingRecord();
    const before = record.failureCount;
    record = ok(expire(record, expireCtx(record, 100, 1)));
    expect(record).toMatchObject({ processState: "CompensationPending", compensationFailureCount: 1 });
    record = ok(claim(record, { now: new Date(record.retryAt!), claimTimeoutSeconds: 60 }));
    record = ok(expire(record, expireCtx(record, 1000, 1)));
    expect(record).toMatchObject({ processState: "CompensationFailed", compensationFailureCount: 2 });
    expect(record.alert).toMatchObject({ kind: "CompensationFailed", sentAt: null });
    expect(record.failureCount).toBe(before);
  });

  it("caps the back-off", () => {
    expect(backoffSeconds(10, 1)).toBe(10);
    expect(backoffSeconds(10, 30)).toBe(3600);
  });
});

describe("requestCompensation and operator actions", () => {
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

  it("lets an operator retry an Error order with the failure count reset", () => {
    let record = claimedRecord(at(1));
    record = ok(expire(record, expireCtx(record, 100, 0)));
    expect(record.processState).toBe("Error");
    const retried = ok(operatorRetry(record, { now: at(200), operator: "ana", reason: "service fixed" }));
    expect(retried).toMatchObject({ processState: "Pending", failureCount: 0, retryAt: null });
    expect(retried.history.at(-1)).toMatchObject({
      event: "operatorRetry",
      by: "operator:ana",
      detail: "service fixed",
    });
  });

  it("lets an operator retry a CompensationFailed order, forgetting the failed undo", () => {
    const r = compensatingRecord();
    const d = ok(
      compensationStepDispatched(r, {
        now: at(21),
        lockedBy: r.lockedBy!,
        stepIndex: 1,
        stepTimeoutSeconds: 30,
      }),
    );
    const failed = ok(
      compensationStepFailed(d, {
        now: at(22),
        lockedBy: d.lockedBy!,
        stepIndex: 1,
        outcome: "permanent",
        error: { code: "x", message: "" },
      }),
    );
    const retried = ok(operatorRetry(failed, { now: at(300), operator: "ana" }));
    expect(retried).toMatchObject({ processState: "CompensationPending", compensationFailureCount: 0 });
    expect(retried.steps[1]!.undo).toBeNull();
    expect(nextUndoIndex(retried)).toBe(1);
  });

  it("refuses an operator retry of an order that is not stuck", () => {
    expect(refusal(operatorRetry(claimedRecord(), { now: at(5), operator: "ana" })).code).toBe("WrongState");
  });

  it("lets an operator cancel an Error order", () => {
    let record = processingRecord(1, true);
    record = ok(expire(record, expireCtx(record, 1000, 0)));
    const cancelled = ok(operatorCancel(record, { now: at(1001), operator: "ana" }));
    expect(cancelled).toMatchObject({ processState: "CompensationPending" });
    expect(cancelled.compensationRequest).toMatchObject({ requestedBy: "operator:ana" });
  });
});

describe("records", () => {
  it("never mutates the record it is given", () => {
    const record = processingRecord(1, true);
    const copy = structuredClone(record);
    stepSucceeded(record, {
      now: at(12),
      lockedBy: record.lockedBy!,
      stepIndex: 1,
      result: 1,
      compensation: 1,
    });
    expect(record).toEqual(copy);
  });

  it("bounds the audit trail", () => {
    let record = pendingRecord();
    for (let i = 0; i < HISTORY_LIMIT + 10; i++) {
      record = ok(claim(record, { now: at(i * 100), claimTimeoutSeconds: 1 }));
      record = ok(expire(record, expireCtx(record, i * 100 + 2, 1000)));
      record = { ...record, retryAt: null };
    }
    expect(record.history).toHaveLength(HISTORY_LIMIT);
    expect(stateRecordSchema.safeParse(record).success).toBe(true);
  });
});
