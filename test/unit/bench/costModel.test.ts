// The cost model's rules, each on figures worked out by hand from the documented points of bench/azureRates.ts:
// a point read is 1 RU up to 1 KB and 10 RU at 100 KB, an insert 5.5 RU at 1 KB and 10× that at 100 KB, a
// replace twice an insert; the prices are $0.25 per million RU, $0.008 per 100 RU/s-hour, $0.80 per million
// Service Bus operations, $0.004 per 10,000 storage transactions, $0.40 per million executions and
// $0.000026 per GB-s.
import { describe, expect, it } from "vitest";
import { COSMOS_RULES, PRICES, SERVICE_RULES } from "../../../bench/azureRates";
import {
  deleteRu,
  dtsActionsPerOrder,
  flexGbSecondsPerOrder,
  insertRu,
  orderCost,
  pointReadRu,
  queryRu,
  replaceRu,
  ruLines,
  serviceBusOpsPerOrder,
  sizeFactor,
  storageTransactionsPerOrder,
} from "../../../bench/costModel";
import { happyPathBus, happyPathDurable, orderProfile, storeRow } from "../../support/orderProfiles";

const KB = 1024;

const row = storeRow;

// Some settlements and renewals, and larger messages, than the happy path: they count too.
const bus = {
  ...happyPathBus,
  otherSettlementsPerOrder: 0.5,
  lockRenewalsPerOrder: 0.5,
  meanMessageBytes: 600,
  largestMessageBytes: 1_500,
};

/** The three-step happy path's durable work, with 8 episodes. */
const durable = { ...happyPathDurable, episodesPerOrder: 8 };

/** 100 RU an order exactly: 8 replaces of 2 KB (12 RU each), 1.5 reads of 1 KB (1 RU), a query of nothing (2.5). */
const profile = orderProfile({
  store: [
    row({ kind: "PUT doc state", operation: "replace", perOrder: 8, meanDocumentBytes: 2 * KB }),
    row({ kind: "GET doc orders", operation: "pointRead", perOrder: 1.5, meanDocumentBytes: KB }),
    row({ kind: "POST query state", operation: "query", itemsPerRequest: 0 }),
    row({ kind: "GET pkranges state", operation: "metadata", perOrder: 3 }),
  ],
  bus,
  durable,
  functions: { executionsPerOrder: 20, executionMsPerOrder: 300 },
});

describe("Cosmos DB request units", () => {
  it("charges a point read by size: 1 RU up to 1 KB, 10 RU at 100 KB, on the line between", () => {
    expect(pointReadRu(100)).toBe(1);
    expect(pointReadRu(KB)).toBe(1);
    expect(pointReadRu(100 * KB)).toBeCloseTo(10, 10);
    // 2 KB: 1 + 1 KB × 9 RU / 99 KB.
    expect(pointReadRu(2 * KB)).toBeCloseTo(1 + 9 / 99, 10);
    expect(sizeFactor(50.5 * KB, 10)).toBeCloseTo(5.5, 10);
  });

  it("charges an insert 5.5 RU at 1 KB and ten times that at 100 KB, a replace twice an insert", () => {
    expect(insertRu(KB)).toBe(5.5);
    expect(insertRu(100 * KB)).toBeCloseTo(55, 10);
    expect(insertRu(2 * KB)).toBeCloseTo(6, 10);
    expect(replaceRu(2 * KB)).toBeCloseTo(12, 10);
    expect(deleteRu(KB)).toBe(5.5);
  });

  it("charges a query its per-request minimum plus each item as a point read of its size", () => {
    expect(queryRu(0, 0)).toBe(2.5);
    expect(queryRu(10, KB)).toBe(12.5);
    expect(queryRu(2, 100 * KB)).toBeCloseTo(22.5, 10);
  });

  it("charges refused requests 1 RU each, metadata nothing, and a delete as an insert of its container's writes", () => {
    const lines = ruLines([
      row({
        kind: "PUT doc state",
        operation: "replace",
        perOrder: 8,
        failedPerOrder: 0.5,
        meanDocumentBytes: 2 * KB,
      }),
      row({ kind: "POST docs leases", operation: "create", perOrder: 0.5, meanDocumentBytes: 300 }),
      row({ kind: "DELETE doc leases", operation: "delete", perOrder: 0.5 }),
      row({ kind: "GET colls state", operation: "metadata", perOrder: 2, failedPerOrder: 1 }),
    ]);
    const ru = Object.fromEntries(lines.map((l) => [l.kind, l.ruPerOrder]));
    // 7.5 replaces at 12 RU and 0.5 refused at 1 RU.
    expect(ru["PUT doc state"]).toBeCloseTo(90.5, 10);
    expect(ru["POST docs leases"]).toBeCloseTo(2.75, 10);
    // The lease documents written are 300 B, under 1 KB: 5.5 RU a delete, 0.5 deletes an order.
    expect(ru["DELETE doc leases"]).toBeCloseTo(2.75, 10);
    expect(ru["GET colls state"]).toBe(0);
  });
});

describe("the other services' units", () => {
  it("counts every send, receive, settlement and lock renewal as a Service Bus operation", () => {
    expect(serviceBusOpsPerOrder(bus)).toBe(28);
    // A message over 64 KB is billed as one operation per 64 KB started.
    expect(serviceBusOpsPerOrder({ ...bus, largestMessageBytes: 70_000 })).toBe(41);
  });

  it("counts scheduler actions as start + 2 per activity + timers fired + events, cancelled timers on top", () => {
    expect(dtsActionsPerOrder(durable)).toEqual({ low: 12, high: 15 });
    expect(dtsActionsPerOrder({ ...durable, timersFiredPerOrder: 1 }).low).toBe(13);
  });

  it("counts 3 storage transactions per task hub message and per episode", () => {
    // Messages: 1 start + 8 activity messages + 3 events + 3 timers = 15 → 45; 8 episodes → 24.
    expect(storageTransactionsPerOrder(durable)).toBe(69);
  });

  it("bills an instance's 2 GB for the app's CPU time per order", () => {
    expect(flexGbSecondsPerOrder(profile.functions)).toBeCloseTo(0.1, 10);
  });
});

describe("orderCost", () => {
  const cost = orderCost(profile, "Provisioned", [100, 1_000]);

  it("adds the request units of every kind, by container", () => {
    expect(cost.ruPerOrder).toBeCloseTo(100, 10);
    expect(cost.ruPerOrderByContainer.state).toBeCloseTo(98.5, 10);
    expect(cost.ruPerOrderByContainer.orders).toBeCloseTo(1.5, 10);
    // Metadata requests cost nothing, so their container is not listed.
    expect(Object.keys(cost.ruPerOrderByContainer).sort()).toEqual(["orders", "state"]);
  });

  it("prices a million orders service by service", () => {
    const usd = cost.usdPerMillionOrders;
    expect(usd.cosmosServerless).toBeCloseTo(25, 10);
    // 100 RU × 1.5 headroom = 1.5 units of 100 RU/s per order/s, $0.012 an hour, for 3,600 orders an hour.
    expect(usd.cosmosProvisioned).toBeCloseTo((1.5 * 0.008 * 1e6) / 3600, 10);
    expect(usd.serviceBusStandard).toBeCloseTo(22.4, 10);
    expect(usd.azureStorageBackend).toBeCloseTo(27.6, 10);
    expect(usd.flexConsumption).toBeCloseTo(8 + 2.6, 10);
    expect(usd.durableTaskScheduler).toBeNull();
    expect(usd.withServerless).toBeCloseTo(25 + 22.4 + 27.6 + 10.6, 10);
  });

  it("prices the shipped defaults with the capacity mode the template deploys", () => {
    expect(cost.usdPerMillionOrders.shippedDefaults).toBe(cost.usdPerMillionOrders.withAutoscale);
    const serverless = orderCost(profile, "Serverless", [100]);
    expect(serverless.usdPerMillionOrders.shippedDefaults).toBe(
      serverless.usdPerMillionOrders.withServerless,
    );
  });

  it("prices autoscale (COSMOS_CAPACITY_MODE=Provisioned) at 1.5 × the manual rate, and its idle floor", () => {
    const usd = cost.usdPerMillionOrders;
    // 100 RU per order busy all hour: 1 unit of 100 RU/s per order/s at $0.008 × 1.5, for 3,600 orders an hour.
    expect(usd.cosmosAutoscale).toBeCloseTo((0.008 * 1.5 * 1e6) / 3600, 10);
    expect(usd.withAutoscale).toBeCloseTo(usd.cosmosAutoscale + 22.4 + 27.6 + 10.6, 10);
    // The smallest maximum, 1,000 RU/s, bills at least 100 RU/s every hour: $0.012 an hour, $8.76 a month.
    expect(cost.autoscale.floorUsdPerMonth).toBeCloseTo(0.012 * 730, 10);
    // A day of that floor ($0.288) buys 11,520 orders of 100 RU at serverless prices ($0.000025 each).
    expect(cost.autoscale.serverlessBreakEvenOrdersPerDay).toBeCloseTo(11_520, 6);
    expect(cost.autoscale.ordersPerSecAtSmallestMaximum).toBeCloseTo(10, 10);
  });

  it("sizes throughput, Premium messaging units and scheduler capacity units for a rate", () => {
    const [at100, at1000] = cost.atRates;
    expect(at100).toMatchObject({
      ordersPerSec: 100,
      provisionedRuPerSec: 15_000,
      serviceBusOpsPerSec: 2_800,
      premiumMessagingUnits: 3,
      dtsActionsPerSec: 1_200,
      dtsCapacityUnits: 1,
    });
    expect(at100!.premiumUsdPerMillionOrders).toBeCloseTo(((3 * 0.9275) / 360_000) * 1e6, 10);
    expect(at1000).toMatchObject({
      provisionedRuPerSec: 150_000,
      premiumMessagingUnits: 28,
      dtsCapacityUnits: 6,
    });
  });
});

describe("the rules and prices", () => {
  it("each name a source, and each assumption says why", () => {
    for (const rate of [
      ...Object.values(COSMOS_RULES),
      ...Object.values(SERVICE_RULES),
      ...Object.values(PRICES),
    ]) {
      expect(rate.source, rate.unit).not.toBe("");
      if (rate.basis !== "documented") expect(rate.note, rate.unit).not.toBe("");
    }
  });
});
