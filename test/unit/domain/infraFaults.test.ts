import { describe, expect, it } from "vitest";
import {
  attemptStartedAt,
  endedOnServiceFailure,
  expire,
  faultSince,
  INFRA_FAULTS,
  infraAlertDue,
  mergeEpisodes,
  noteFault,
  stepDispatched,
  stepFailedTransient,
  type InfraEpisode,
} from "../../../src/domain";
import { at, claimedRecord, ok, processingRecord } from "../../support/domain";

const gap = INFRA_FAULTS.episodeGapSeconds;

describe("episodes of infrastructure faults", () => {
  it("runs faults less than the gap apart into one episode and starts a new one after a quiet gap", () => {
    const first = noteFault(null, at(0), "store 503: a");
    const second = noteFault(first, at(gap - 1), "store 503: b");
    expect(second).toEqual({
      since: at(0).toISOString(),
      lastAt: at(gap - 1).toISOString(),
      detail: "store 503: b",
      alertedAt: null,
      alertSentAt: null,
    });
    const third = noteFault(second, at(2 * gap), "ServiceTimeout: c");
    expect(third).toMatchObject({
      since: at(2 * gap).toISOString(),
      lastAt: at(2 * gap).toISOString(),
      detail: "ServiceTimeout: c",
    });
  });

  it("merges two instances' views of one episode, keeping the earliest start, the latest fault and a decided alert", () => {
    const mine: InfraEpisode = { ...noteFault(null, at(10), "mine"), lastAt: at(40).toISOString() };
    const theirs: InfraEpisode = {
      ...noteFault(null, at(0), "theirs"),
      lastAt: at(20).toISOString(),
      alertedAt: at(15).toISOString(),
    };
    expect(mergeEpisodes(mine, theirs)).toEqual({
      since: at(0).toISOString(),
      lastAt: at(40).toISOString(),
      detail: "mine",
      alertedAt: at(15).toISOString(),
      alertSentAt: null,
    });
    const longAgo = noteFault(null, at(0), "old");
    const now = noteFault(null, at(gap + 5), "new");
    expect(mergeEpisodes(longAgo, now)).toEqual(now);
    expect(mergeEpisodes(null, now)).toEqual(now);
  });

  it("says which part failed at or after a moment", () => {
    const bus = noteFault(null, at(100), "ServiceTimeout: x");
    expect(faultSince({ store: null, bus }, at(100))).toEqual({ part: "bus", detail: "ServiceTimeout: x" });
    expect(faultSince({ store: null, bus }, at(101))).toBeUndefined();
  });

  it("has an alert due once an ongoing episode has lasted long enough, and only once", () => {
    const lasting: InfraEpisode = {
      ...noteFault(null, at(0), "x"),
      lastAt: at(INFRA_FAULTS.alertAfterSeconds).toISOString(),
    };
    expect(infraAlertDue(noteFault(null, at(0), "x"), at(1))).toBe(false);
    expect(infraAlertDue(lasting, at(INFRA_FAULTS.alertAfterSeconds + 1))).toBe(true);
    expect(infraAlertDue({ ...lasting, alertedAt: at(61).toISOString() }, at(62))).toBe(false);
    // Over (quiet for the gap): no alert for an outage nobody can act on any more.
    expect(infraAlertDue(lasting, at(INFRA_FAULTS.alertAfterSeconds + gap))).toBe(false);
  });
});

describe("expire after a fault of the app's own infrastructure", () => {
  const record = claimedRecord(at(1));
  const ctx = {
    now: at(62),
    expectedLockedBy: record.lockedBy!,
    maxFailures: 1,
    backoffSeconds: 10,
    outageMaxSeconds: 120,
    infraFault: { part: "bus" as const, detail: "ServiceTimeout: no answer" },
  };

  it("starts the attempt at its claim", () => {
    expect(attemptStartedAt(record)).toEqual(at(1));
  });

  it("sends the order back without counting a failure, and says why in the audit trail", () => {
    const parked = ok(expire({ ...record, failureCount: 1 }, ctx));
    expect(parked).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      failureCount: 1,
      retryAt: at(72).toISOString(),
      parkedSince: at(62).toISOString(),
      alert: null,
    });
    expect(parked.history.at(-1)).toMatchObject({ event: "parked", by: "supervisor" });
    expect(parked.history.at(-1)!.detail).toContain(
      "the app's own bus failed (ServiceTimeout: no answer); not counted",
    );
  });

  it("counts an attempt that ended on its service's failure, whatever the app's store or bus did meanwhile", () => {
    // The agent's answer went out and was recorded: the service failed every call, not the app.
    const dispatched = processingRecord(0, true);
    const failed = ok(
      stepFailedTransient(dispatched, {
        now: at(12),
        lockedBy: dispatched.lockedBy!,
        stepIndex: 0,
        error: { code: "HTTP503", message: "Service Unavailable" },
      }),
    );
    expect(endedOnServiceFailure(failed)).toBe(true);
    expect(endedOnServiceFailure(dispatched)).toBe(false);
    const counted = ok(expire(failed, { ...ctx, expectedLockedBy: failed.lockedBy! }));
    expect(counted).toMatchObject({ processState: "Pending", failureCount: 1, parkedSince: null });
    expect(counted.history.at(-1)).toMatchObject({ event: "expired", by: "supervisor" });
    // One that ran out of time with no answer may owe it to the app: not counted.
    const timedOut = ok(
      stepDispatched(claimedRecord(at(1)), {
        now: at(2),
        lockedBy: record.lockedBy!,
        stepIndex: 0,
        stepTimeoutSeconds: 30,
      }),
    );
    expect(ok(expire(timedOut, ctx))).toMatchObject({ processState: "Pending", failureCount: 0 });
  });

  it("counts again once the order has waited OUTAGE_MAX_SECONDS, so a lasting fault still ends in Error", () => {
    const waited = { ...record, failureCount: 1, parkedSince: at(62 - 121).toISOString() };
    expect(ok(expire(waited, ctx))).toMatchObject({ processState: "Error", failureCount: 2 });
    expect(ok(expire({ ...record, failureCount: 1 }, { ...ctx, infraFault: undefined }))).toMatchObject({
      processState: "Error",
    });
  });
});
