/** Parking and deferring for an outage: no failure counted, due again at the probe time, bounded by OUTAGE_MAX_SECONDS. */
import { describe, expect, it } from "vitest";
import {
  BREAKER,
  claim,
  deferForOutage,
  isDocumentedEdge,
  outageOutlasted,
  parkForOutage,
  parkJitterSeconds,
  PARK_JITTER_SECONDS,
  stepDispatched,
  stepSucceeded,
  type StateRecord,
} from "../../../../src/domain";
import { at, ok, pendingRecord, processingRecord } from "../../../support/domain";

const error = { code: "CircuitOpen", message: "circuit breaker open" };

function parked(record: StateRecord, now = at(20), until = at(30)): StateRecord {
  return ok(
    parkForOutage(record, {
      now,
      lockedBy: record.lockedBy!,
      stepIndex: 1,
      error,
      until,
      outageMaxSeconds: 3600,
    }),
  );
}

describe("parking for an outage", () => {
  it("releases the lock and makes the order due at the probe time plus jitter, counting no failure", () => {
    const record = processingRecord(1, true);
    const p = parked(record);
    expect(p).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      failureCount: record.failureCount,
      parkedSince: at(20).toISOString(),
      lastError: { code: "CircuitOpen" },
    });
    const delay = (Date.parse(p.retryAt!) - at(30).getTime()) / 1000;
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThan(PARK_JITTER_SECONDS);
    expect(p.history.at(-1)).toMatchObject({
      event: "parked",
      by: "scheduler",
      from: "Processing",
      to: "Pending",
    });
    expect(isDocumentedEdge("parkForOutage", "Processing", "Pending")).toBe(true);
  });

  it("keeps the first parkedSince across parks, and clears it when a step succeeds", () => {
    const first = parked(processingRecord(1, true));
    const again = ok(claim(first, { now: at(40), claimTimeoutSeconds: 60 }));
    const lockedBy = again.lockedBy!;
    const dispatched = ok(
      stepDispatched(again, { now: at(41), lockedBy, stepIndex: 1, stepTimeoutSeconds: 30 }),
    );
    const second = parked(dispatched, at(42), at(60));
    expect(second.parkedSince).toBe(at(20).toISOString());
    expect(outageOutlasted(second, at(20 + 100), 100)).toBe(false);
    expect(outageOutlasted(second, at(20 + 101), 100)).toBe(true);
    const resumed = ok(claim(second, { now: at(70), claimTimeoutSeconds: 60 }));
    const redispatched = ok(
      stepDispatched(resumed, {
        now: at(71),
        lockedBy: resumed.lockedBy!,
        stepIndex: 1,
        stepTimeoutSeconds: 30,
      }),
    );
    const done = ok(
      stepSucceeded(redispatched, {
        now: at(72),
        lockedBy: resumed.lockedBy!,
        stepIndex: 1,
        result: {},
        compensation: {},
      }),
    );
    expect(done.parkedSince).toBeNull();
  });

  it("is fenced, and only answers the step the attempt awaits", () => {
    const record = processingRecord(1, true);
    const fenced = parkForOutage(record, {
      now: at(20),
      lockedBy: "ORD-1001:9",
      stepIndex: 1,
      error,
      until: at(30),
      outageMaxSeconds: 3600,
    });
    expect(fenced.ok || fenced.refusal.code).toBe("NotLockHolder");
    const wrongStep = parkForOutage(record, {
      now: at(20),
      lockedBy: record.lockedBy!,
      stepIndex: 2,
      error,
      until: at(30),
      outageMaxSeconds: 3600,
    });
    expect(wrongStep.ok || wrongStep.refusal.code).toBe("StepOutOfOrder");
  });

  it("never parks for longer than the longest open period, whatever the reply says", () => {
    const p = parked(processingRecord(1, true), at(20), at(20 + 100_000));
    expect(Date.parse(p.retryAt!)).toBeLessThan(
      at(20 + BREAKER.maxOpenSeconds + PARK_JITTER_SECONDS).getTime(),
    );
  });

  it("wakes the order when its OUTAGE_MAX_SECONDS ends, if that comes before the probe", () => {
    const record = processingRecord(1, true);
    const p = ok(
      parkForOutage(record, {
        now: at(20),
        lockedBy: record.lockedBy!,
        stepIndex: 1,
        error,
        until: at(300),
        outageMaxSeconds: 60,
      }),
    );
    const due = Date.parse(p.retryAt!);
    expect(due).toBeGreaterThan(at(80).getTime());
    expect(due).toBeLessThan(at(80 + PARK_JITTER_SECONDS + 1).getTime());
    expect(outageOutlasted(p, new Date(due), 60)).toBe(true);
  });

  it("spreads orders parked in the same instant", () => {
    const spreads = new Set(
      Array.from({ length: 50 }, (_, i) => parkJitterSeconds(`ORD-${i}`, 1).toFixed(3)),
    );
    expect(spreads.size).toBeGreaterThan(40);
  });
});

describe("deferring a due order", () => {
  it("moves retryAt to the probe time without claiming, and refuses a locked record", () => {
    const deferred = ok(
      deferForOutage(pendingRecord(), {
        now: at(5),
        until: at(15),
        service: "payment",
        outageMaxSeconds: 3600,
      }),
    );
    expect(deferred).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      attempt: 0,
      parkedSince: at(5).toISOString(),
    });
    expect(Date.parse(deferred.retryAt!)).toBeGreaterThanOrEqual(at(15).getTime());
    const refused = claim(deferred, { now: at(10), claimTimeoutSeconds: 60 });
    expect(refused.ok || refused.refusal.code).toBe("NotDue");
    const locked = deferForOutage(processingRecord(0), {
      now: at(5),
      until: at(15),
      service: "payment",
      outageMaxSeconds: 3600,
    });
    expect(locked.ok || locked.refusal.code).toBe("WrongState");
  });
});
