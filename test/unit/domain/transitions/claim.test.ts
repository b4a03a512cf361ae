import { describe, expect, it } from "vitest";
import { claim, claimAndDispatch, nextUndoIndex, operatorCancel } from "../../../../src/domain";
import { at, claimedRecord, ok, pendingRecord, processingRecord } from "../../../support/domain";
import { refusal } from "./support";

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

describe("claimAndDispatch", () => {
  const ctx = (seconds: number) => ({ now: at(seconds), claimTimeoutSeconds: 60, stepTimeoutSeconds: 30 });

  it("claims a Pending record and dispatches its first step in the same write, with the step's deadline", () => {
    const record = ok(claimAndDispatch(pendingRecord(), ctx(1)));
    expect(record).toMatchObject({
      processState: "Processing",
      attempt: 1,
      lockedBy: "ORD-1001:1",
      completeBy: at(31).toISOString(),
    });
    expect(record.steps[0]).toMatchObject({ status: "Dispatched", requestId: expect.any(String) });
    expect(record.history.slice(-2).map((h) => h.event)).toEqual(["claimed", "stepDispatched"]);
  });

  it("claims a CompensationPending record and dispatches its next undo", () => {
    const cancelled = ok(operatorCancel(processingRecord(1), { now: at(5), operator: "ana" }));
    const undo = nextUndoIndex(cancelled);
    const record = ok(claimAndDispatch(cancelled, ctx(6)));
    expect(record).toMatchObject({ processState: "Compensating", attempt: 2, lockedBy: "ORD-1001:2" });
    expect(record.steps[undo]!.undo).toMatchObject({ status: "Dispatched" });
    expect(record.history.at(-1)!.event).toBe("compensationStepDispatched");
  });

  it("is the claim alone when nothing is left to call, and refuses what claim refuses", () => {
    const nothingToUndo = { ...pendingRecord(), processState: "CompensationPending" as const };
    expect(claimAndDispatch(nothingToUndo, ctx(1))).toEqual(claim(nothingToUndo, ctx(1)));
    expect(refusal(claimAndDispatch(claimedRecord(), ctx(2))).code).toBe("WrongState");
  });
});
