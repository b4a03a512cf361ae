/** The shared circuit breaker's state machine: when it opens, who probes, when it closes, what it alerts. */
import { describe, expect, it } from "vitest";
import {
  admit,
  BREAKER,
  breakerAlertSent,
  closedBreaker,
  isSuspect,
  openSeconds,
  recordFailure,
  recordSuccess,
  unavailableUntil,
  unsentAlerts,
  type BreakerRecord,
} from "../../../src/domain";
import { at } from "../../support/domain";

const settings = { openSeconds: 10, callTimeoutSeconds: 1 };

/** Fails `calls` calls in a row, from the orders named in turn. */
function failCalls(record: BreakerRecord, orders: string[], calls: number, t = 0): BreakerRecord {
  let r = record;
  for (let i = 0; i < calls; i++) r = recordFailure(r, orders[i % orders.length]!, at(t), settings, 7) ?? r;
  return r;
}

const opened = () => failCalls(closedBreaker("payment", at(0)), ["A", "B", "C"], BREAKER.failureThreshold);

describe("the shared circuit breaker", () => {
  it("opens after the threshold of consecutive failures from several orders, deciding one ServiceUnavailable", () => {
    const before = failCalls(closedBreaker("payment", at(0)), ["A", "B", "C"], BREAKER.failureThreshold - 1);
    expect(before.state).toBe("closed");
    const open = opened();
    expect(open).toMatchObject({
      state: "open",
      openedAt: at(0).toISOString(),
      retryAt: at(10).toISOString(),
    });
    expect(unsentAlerts(open)).toEqual([
      expect.objectContaining({
        kind: "ServiceUnavailable",
        messageId: "breaker:payment:1:ServiceUnavailable",
      }),
    ]);
    expect(unsentAlerts(open)[0]!.reason).toContain("7 orders are not finished");
  });

  it("stays closed when all the failures are one order's: its payload, not the service, is at fault", () => {
    const r = failCalls(closedBreaker("payment", at(0)), ["POISON"], 50);
    expect(r).toMatchObject({ state: "closed", failures: 50, failingOrders: ["POISON"] });
    expect(unsentAlerts(r)).toEqual([]);
  });

  it("counts only consecutive failures: a success resets them, and costs no write when there were none", () => {
    const r = failCalls(closedBreaker("payment", at(0)), ["A", "B"], 3);
    const reset = recordSuccess(r, "C", at(1), { parked: 0, outlasted: 0 })!;
    expect(reset).toMatchObject({ state: "closed", failures: 0, failingOrders: [] });
    expect(recordSuccess(reset, "C", at(2), { parked: 0, outlasted: 0 })).toBeNull();
  });

  it("refuses calls until retryAt, then lets exactly one caller take the probe", () => {
    const open = opened();
    expect(admit(open, "X", at(5), settings)).toEqual({ kind: "refuse", until: at(10) });
    expect(unavailableUntil(open, at(5))).toEqual(at(10));
    const probe = admit(open, "X", at(10), settings);
    expect(probe.kind).toBe("probe");
    const half = (probe as { record: BreakerRecord }).record;
    expect(half).toMatchObject({ state: "halfOpen", probe: { orderId: "X" } });
    const until = new Date(half.probe!.until);
    expect(until.getTime()).toBe(at(10).getTime() + (1 + BREAKER.probeMarginSeconds) * 1000);
    expect(admit(half, "Y", at(11), settings)).toEqual({ kind: "refuse", until });
    expect(admit(half, "X", at(11), settings)).toEqual({ kind: "call" });
    // A prober that never reports back loses the probe to the next caller.
    expect(admit(half, "Y", new Date(until.getTime() + 1), settings).kind).toBe("probe");
  });

  /** Probes by `probers` in turn, each failing; the length of each open period that follows. */
  function failProbes(
    record: BreakerRecord,
    probers: string[],
  ): { record: BreakerRecord; lengths: number[] } {
    let r = record;
    const lengths: number[] = [];
    for (const prober of probers) {
      const t = Date.parse(r.retryAt!);
      r = (admit(r, prober, new Date(t), settings) as { record: BreakerRecord }).record;
      r = recordFailure(r, prober, new Date(t), settings, null)!;
      lengths.push((Date.parse(r.retryAt!) - t) / 1000);
    }
    return { record: r, lengths };
  }

  it("reopens for twice as long on a failed probe, capped, without a second ServiceUnavailable", () => {
    const probers = ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"];
    const { record, lengths } = failProbes(opened(), probers);
    expect(lengths).toEqual([20, 40, 80, 160, 300, 300, 300, 300]);
    expect(lengths.every((s, i) => s === openSeconds(settings, i + 1))).toBe(true);
    expect(record.alerts.map((a) => a.kind)).toEqual(["ServiceUnavailable"]);
  });

  it("does not lengthen the open period for probes by orders whose own calls failed here", () => {
    // A, B and C opened it (say their payloads make the service fail); their failed probes say little about it.
    const suspects = failProbes(opened(), ["A", "B", "C", "A"]);
    expect(suspects.lengths).toEqual([10, 10, 10, 10]);
    expect(suspects.record).toMatchObject({ failedProbes: 0, suspectProbes: 4 });
    expect(isSuspect(suspects.record, "A")).toBe(true);
    expect(isSuspect(suspects.record, "D")).toBe(false);
    // A fresh order's failed probe is evidence: it doubles, and that order is a suspect from then on.
    const fresh = failProbes(suspects.record, ["D", "D"]);
    expect(fresh.lengths).toEqual([20, 20]);
    expect(isSuspect(fresh.record, "D")).toBe(true);
    // The recovery alert tells both kinds apart.
    const t = new Date(Date.parse(fresh.record.retryAt!));
    const half = (admit(fresh.record, "E", t, settings) as { record: BreakerRecord }).record;
    const closed = recordSuccess(half, "E", t, { parked: 0, outlasted: 0 })!;
    expect(unsentAlerts(closed).at(-1)!.reason).toContain(
      "1 failed probe, and 5 from orders whose own calls had failed",
    );
    expect(closed).toMatchObject({ failingOrders: [], failedProbes: 0, suspectProbes: 0 });
  });

  it("remembers the orders whose calls failed across successes and outages, until their own call succeeds", () => {
    // Two poison orders fail their attempts; other orders' successes in between reset the streak each time.
    let r = failCalls(closedBreaker("inventory", at(0)), ["P1"], 3);
    r = recordSuccess(r, "OK-1", at(1), { parked: 0, outlasted: 0 })!;
    r = failCalls(r, ["P2"], 3, 2);
    r = recordSuccess(r, "OK-2", at(3), { parked: 0, outlasted: 0 })!;
    expect(r).toMatchObject({ state: "closed", failures: 0, failingOrders: [] });
    expect([isSuspect(r, "P1"), isSuspect(r, "P2"), isSuspect(r, "OK-1")]).toEqual([true, true, false]);
    // Three others open it (a false outage), and the poison orders are the ones due when the probe is: their
    // failed probes reopen it for the same period, as a streak order's would, instead of 20, 40, 80 s.
    r = failCalls(r, ["A", "B", "C"], BREAKER.failureThreshold, 4);
    const { record, lengths } = failProbes(r, ["P1", "P2"]);
    expect(lengths).toEqual([10, 10]);
    expect(record).toMatchObject({ failedProbes: 0, suspectProbes: 2 });
    // A suspect whose own call is answered is one no longer; a closing forgets no one else.
    const t = new Date(Date.parse(record.retryAt!));
    const half = (admit(record, "P1", t, settings) as { record: BreakerRecord }).record;
    const closed = recordSuccess(half, "P1", t, { parked: 0, outlasted: 0 })!;
    expect(closed.state).toBe("closed");
    expect([isSuspect(closed, "P1"), isSuspect(closed, "P2"), isSuspect(closed, "A")]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it("keeps the latest BREAKER.suspectsKept suspects, the most recent failure last", () => {
    const orders = Array.from({ length: BREAKER.suspectsKept + 1 }, (_, i) => `O-${i}`);
    let r = closedBreaker("shipping", at(0));
    for (const orderId of orders) {
      r = recordFailure(r, orderId, at(1), settings, null)!;
      r = recordSuccess(r, "OK", at(1), { parked: 0, outlasted: 0 }) ?? r;
    }
    r = recordFailure(r, "O-1", at(2), settings, null)!;
    expect(r.suspects).toHaveLength(BREAKER.suspectsKept);
    expect(r.suspects.at(-1)).toBe("O-1");
    expect(isSuspect(r, "O-0")).toBe(false);
  });

  it("closes on the probe's success, deciding ServiceRecovered, and keeps the unsent ServiceUnavailable", () => {
    const open = opened();
    const half = (admit(open, "X", at(10), settings) as { record: BreakerRecord }).record;
    const closed = recordSuccess(half, "X", at(12), { parked: 4, outlasted: 2 })!;
    expect(closed).toMatchObject({ state: "closed", openedAt: null, retryAt: null, probe: null });
    expect(unsentAlerts(closed).map((a) => a.messageId)).toEqual([
      "breaker:payment:1:ServiceUnavailable",
      "breaker:payment:1:ServiceRecovered",
    ]);
    expect(unsentAlerts(closed)[1]!.reason).toMatch(
      /after 12 s unavailable.*4 parked orders resume; 2 orders waited longer than OUTAGE_MAX_SECONDS/,
    );
  });

  it("marks an alert sent once, and numbers the next outage's alerts anew", () => {
    const open = opened();
    const sent = breakerAlertSent(open, "breaker:payment:1:ServiceUnavailable", at(1))!;
    expect(unsentAlerts(sent)).toEqual([]);
    expect(breakerAlertSent(sent, "breaker:payment:1:ServiceUnavailable", at(2))).toBeNull();
    const closed = recordSuccess(sent, "Z", at(3), { parked: 0, outlasted: 0 })!;
    const again = failCalls(closed, ["D", "E", "F"], BREAKER.failureThreshold, 4);
    expect(unsentAlerts(again).map((a) => a.messageId)).toEqual([
      "breaker:payment:1:ServiceRecovered",
      "breaker:payment:2:ServiceUnavailable",
    ]);
  });

  it("ignores a late failure while open", () => {
    expect(recordFailure(opened(), "Z", at(1), settings, null)).toBeNull();
  });
});
