// The telemetry benchmark's arithmetic: which envelopes are an order's, and what their bytes cost.
import { describe, expect, it } from "vitest";
import { envelopesByName, orderTraceEnvelopes, telemetryUsdPerMillionOrders } from "../../../bench/telemetry";
import type { Envelope } from "../../../tools/ingestionStandIn";

const envelope = (trace: string, orderId?: string): { envelope: Envelope; bytes: number } => ({
  envelope: {
    name: "Microsoft.ApplicationInsights.RemoteDependency",
    tags: { "ai.operation.id": trace },
    data: {
      baseType: "RemoteDependencyData",
      baseData: { name: "send", ...(orderId ? { properties: { "sas.order_id": orderId } } : {}) },
    },
  },
  bytes: 900,
});

describe("the envelopes of the measured orders", () => {
  it("are every envelope of a trace in which one names a measured order, whether or not it names it too", () => {
    const received = [
      envelope("t1", "ORD-1"),
      envelope("t1"),
      envelope("t2", "WARM-1"),
      envelope("t2"),
      envelope("t3"),
      envelope("t4", "ORD-2"),
    ];
    const ofOrders = orderTraceEnvelopes(received, (id) => id.startsWith("ORD-"));
    // t2 names only a warm-up order, t3 no order at all.
    expect(ofOrders.map((r) => r.envelope.tags["ai.operation.id"])).toEqual(["t1", "t1", "t4"]);
  });
});

describe("what an order's envelopes cost", () => {
  it("bills a quarter less than their JSON, at the Log Analytics price per 10^9 bytes", () => {
    // 40,000 B an order: 30,000 billed; a million orders 30 GB at $2.30.
    expect(telemetryUsdPerMillionOrders(40_000)).toBeCloseTo(69, 6);
    expect(telemetryUsdPerMillionOrders(0)).toBe(0);
  });
});

describe("what an order's trace is made of", () => {
  const named = (baseType: string, name?: string): { envelope: Envelope } => ({
    envelope: {
      name: "",
      tags: {},
      data: { baseType, baseData: name === undefined ? {} : { name } },
    },
  });

  it("counts envelopes by kind and name, order ids written {orderId}, the most frequent first", () => {
    const received = [
      named("RemoteDependencyData", "PUT /dbs/sas/colls/state/docs/ORD-1"),
      named("RemoteDependencyData", "PUT /dbs/sas/colls/state/docs/ORD-22"),
      named("RequestData", "process agent-replies"),
      named("RemoteDependencyData", "send agent-replies"),
      named("RemoteDependencyData", "PUT /dbs/sas/colls/state/docs/ORD-1"),
      named("RequestData"),
      named("MetricData"),
    ];
    expect(envelopesByName(received, /ORD-\d+/g)).toEqual([
      ["dependency PUT /dbs/sas/colls/state/docs/{orderId}", 3],
      ["dependency send agent-replies", 1],
      ["metric", 1],
      ["request", 1],
      ["request process agent-replies", 1],
    ]);
  });
});
