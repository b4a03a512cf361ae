// The order-shape benchmark stands for the real order only while it makes the same hops, and its floor adds what
// the real order does besides them at sdkCost's prices.
import { describe, expect, it } from "vitest";
import { besidesTheHopsCpuMs, hopMismatches, hopsOf } from "../../../bench/orderShape";
import { orderProfile } from "../../support/orderProfiles";

const order = hopsOf(orderProfile());

describe("the order shape's hops", () => {
  it("are the real order's messages, deliveries, activities and raised events", () => {
    expect(order).toEqual({
      messagesPerOrder: 13,
      deliveriesPerOrder: 7,
      activitiesPerOrder: 4,
      eventsRaisedPerOrder: 3,
    });
    expect(hopMismatches({ ...order, messagesPerOrder: 13.4 }, order)).toEqual([]);
  });

  it("are named where the shape makes half a hop more or fewer than the order", () => {
    expect(hopMismatches({ ...order, messagesPerOrder: 7, activitiesPerOrder: 3 }, order)).toEqual([
      "messagesPerOrder: the shape 7, the order 13",
      "activitiesPerOrder: the shape 3, the order 4",
    ]);
  });
});

describe("what an order does besides its hops", () => {
  const sdkCost = {
    "storeCreate.cpuMsPerCall": 0.5,
    "storeCreate.callsPerOrder": 2,
    "storeReplace.cpuMsPerCall": 0.25,
    "storeReplace.callsPerOrder": 8,
    "storePointRead.cpuMsPerCall": 0.3,
    "storePointRead.callsPerOrder": 1,
    "storeQuery.cpuMsPerCall": 1,
    "storeQuery.callsPerOrder": 0.2,
    "fetchCall.cpuMsPerCall": 0.5,
    "fetchCall.callsPerOrder": 3,
    // The hops' own calls are in the shape's CPU already: not counted again.
    "busSend.cpuMsPerCall": 100,
    "busSend.callsPerOrder": 13,
  };

  it("is its store requests and remote calls at what each costs its caller", () => {
    expect(besidesTheHopsCpuMs(sdkCost)).toBeCloseTo(1 + 2 + 0.3 + 0.2 + 1.5, 9);
  });

  it("cannot be worked out from figures without one of those calls", () => {
    const { "fetchCall.cpuMsPerCall": _, ...withoutFetch } = sdkCost;
    expect(() => besidesTheHopsCpuMs(withoutFetch)).toThrow(/no fetchCall/);
  });
});
