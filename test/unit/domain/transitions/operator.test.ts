import { describe, expect, it } from "vitest";
import { expire, nextUndoIndex, operatorCancel, operatorRetry } from "../../../../src/domain";
import { at, claimedRecord, ok, processingRecord } from "../../../support/domain";
import { expireCtx, refusal, undoOfStep1Failed } from "./support";

describe("operator actions", () => {
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
    const failed = undoOfStep1Failed("permanent", { code: "x", message: "" });
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
