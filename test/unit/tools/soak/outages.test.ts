import { describe, expect, it } from "vitest";
import { declaredOutage, serviceOutages } from "../../../../tools/soak/soak";
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
});
