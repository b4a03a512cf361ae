import { describe, expect, it } from "vitest";
import {
  declaredOutage,
  outageEvidence,
  OUTAGE_RECORD_MARGIN_MS,
  serviceOutages,
} from "../../../../tools/soak/outages";
import type { ObservedAlert } from "../../../../tools/soak/observe";

const alert = (messageId: string, at: string): ObservedAlert => ({
  kind: messageId.split(":")[3]!,
  service: messageId.split(":")[1]!,
  messageId,
  orderId: null,
  processState: null,
  reason: "",
  at,
});

const window = { service: "payment", from: "2026-12-01T10:00:08.000Z", to: "2026-12-01T10:00:23.000Z" };

describe("the soak's outage evidence", () => {
  it("pairs each outage's alerts by service and outage number", () => {
    const outages = serviceOutages([
      alert("breaker:payment:1:ServiceUnavailable", "2026-12-01T10:00:09.000Z"),
      alert("breaker:payment:1:ServiceRecovered", "2026-12-01T10:00:30.000Z"),
      alert("breaker:payment:2:ServiceUnavailable", "2026-12-01T10:01:00.000Z"),
    ]);
    expect(outages).toEqual([
      {
        service: "payment",
        outage: 1,
        openedAt: "2026-12-01T10:00:09.000Z",
        recoveredAt: "2026-12-01T10:00:30.000Z",
      },
      { service: "payment", outage: 2, openedAt: "2026-12-01T10:01:00.000Z" },
    ]);
  });

  it("finds the declared outage beside a later false one that never closed", () => {
    const serviceOutagesSeen = serviceOutages([
      alert("breaker:payment:1:ServiceUnavailable", "2026-12-01T10:00:09.000Z"),
      alert("breaker:payment:1:ServiceRecovered", "2026-12-01T10:00:30.000Z"),
      alert("breaker:payment:2:ServiceUnavailable", "2026-12-01T10:01:00.000Z"),
    ]);
    expect(declaredOutage({ outageWindow: window, serviceOutages: serviceOutagesSeen })?.outage).toBe(1);
  });

  it("skips a false outage that closed before the declared one began", () => {
    const seen = serviceOutages([
      alert("breaker:payment:1:ServiceUnavailable", "2026-12-01T10:00:02.000Z"),
      alert("breaker:payment:1:ServiceRecovered", "2026-12-01T10:00:05.000Z"),
      alert("breaker:payment:2:ServiceUnavailable", "2026-12-01T10:00:10.000Z"),
    ]);
    const found = declaredOutage({ outageWindow: window, serviceOutages: seen });
    expect(found?.outage).toBe(2);
    expect(found?.recoveredAt).toBeUndefined();
  });

  it("finds none when the declared service never alerted", () => {
    const seen = serviceOutages([alert("breaker:shipping:1:ServiceUnavailable", "2026-12-01T10:00:10.000Z")]);
    expect(declaredOutage({ outageWindow: window, serviceOutages: seen })).toBeUndefined();
  });

  describe("whether the calls the outage failed had to open the breaker", () => {
    const t0 = Date.parse(window.from);
    const hit = (orderId: string, seconds: number) => ({
      orderId,
      at: new Date(t0 + seconds * 1000).toISOString(),
    });
    const end = Date.parse(window.to);
    const fiveFromThree = [hit("A", 1), hit("B", 1.1), hit("C", 1.2), hit("A", 1.3), hit("B", 1.4)];

    it("yes: five calls from three orders the app lived to record", () => {
      expect(outageEvidence(fiveFromThree, end, [])).toEqual({
        calls: 5,
        orders: 3,
        recorded: { calls: 5, orders: 3 },
        opensBreaker: true,
      });
    });

    it("no: five calls from two orders (one order's failures may be its own)", () => {
      const twoOrders = fiveFromThree.map((h) => ({ ...h, orderId: h.orderId === "C" ? "A" : h.orderId }));
      expect(outageEvidence(twoOrders, end, []).opensBreaker).toBe(false);
    });

    it("no: a kill within the margin after a call may have taken its failure with it", () => {
      const kill = { killedAt: t0 + 1_400 + OUTAGE_RECORD_MARGIN_MS - 1, readyAt: t0 + 5_000 };
      expect(outageEvidence(fiveFromThree, end, [kill])).toMatchObject({
        calls: 5,
        recorded: { calls: 4, orders: 3 },
        opensBreaker: false,
      });
      // A kill before the calls, or later than the margin, costs none of them.
      const before = { killedAt: t0, readyAt: t0 + 900 };
      const after = { killedAt: t0 + 1_400 + OUTAGE_RECORD_MARGIN_MS, readyAt: t0 + 5_000 };
      expect(outageEvidence(fiveFromThree, end, [before, after]).opensBreaker).toBe(true);
    });

    it("no: calls in the outage's last moments, whose failures may be recorded after it ended", () => {
      const late = fiveFromThree.map((h) => ({ ...h, at: new Date(end - 1_000).toISOString() }));
      expect(outageEvidence(late, end, [])).toMatchObject({ recorded: { calls: 0 }, opensBreaker: false });
    });
  });
});
