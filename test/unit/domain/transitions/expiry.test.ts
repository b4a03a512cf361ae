import { describe, expect, it } from "vitest";
import { backoffSeconds, claim, expire } from "../../../../src/domain";
import { T0, at, claimedRecord, ok, pendingRecord } from "../../../support/domain";
import { expireCtx, refusal, compensatingRecord } from "./support";

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
