// The order profile as the benchmark builds it from its counters: which operation a request kind is, the size
// of the documents each kind carried, and durable work and executions per order.
import { describe, expect, it } from "vitest";
import { functionExecutions, requestKind, type ServedTally } from "../../../bench/instrument";
import {
  busProfile,
  durableProfile,
  functionsProfile,
  operationOf,
  storeProfile,
} from "../../../bench/orderProfile";

const docs = "/dbs/sas/colls/state/docs";

describe("request kinds", () => {
  it("names method, target and container, telling queries and query plans from creates", () => {
    expect(requestKind({ method: "GET", url: `${docs}/o-1`, headers: {} })).toBe("GET doc state");
    expect(requestKind({ method: "PUT", url: `${docs}/o-1`, headers: {} })).toBe("PUT doc state");
    expect(requestKind({ method: "POST", url: docs, headers: {} })).toBe("POST docs state");
    expect(
      requestKind({ method: "POST", url: docs, headers: { "content-type": "application/query+json" } }),
    ).toBe("POST query state");
    expect(
      requestKind({
        method: "POST",
        url: docs,
        headers: { "content-type": "application/query+json", "x-ms-cosmos-is-query-plan-request": "True" },
      }),
    ).toBe("POST plan state");
    expect(requestKind({ method: "GET", url: "/dbs/sas/colls/state/pkranges", headers: {} })).toBe(
      "GET pkranges state",
    );
  });

  it("maps each kind to the operation Cosmos DB charges for", () => {
    expect(operationOf("GET doc state")).toBe("pointRead");
    expect(operationOf("PUT doc state")).toBe("replace");
    expect(operationOf("POST docs leases")).toBe("create");
    expect(operationOf("DELETE doc leases")).toBe("delete");
    expect(operationOf("POST query state")).toBe("query");
    expect(operationOf("GET docs state")).toBe("query");
    expect(operationOf("POST plan state")).toBe("metadata");
    expect(operationOf("GET colls state")).toBe("metadata");
  });
});

describe("storeProfile", () => {
  const tally = (t: Partial<ServedTally>): ServedTally => ({
    responses: 0,
    failed: 0,
    requestBytes: 0,
    responseBytes: 0,
    items: 0,
    ...t,
  });

  it("takes a write's size from its request, a read's from its response and a query item's from the page", () => {
    const rows = storeProfile(
      new Map([
        ["PUT doc state", 400],
        ["GET doc state", 100],
        ["POST query state", 20],
      ]),
      new Map([
        // 400 replaces, 40 refused: the 360 that were applied sent 720,000 bytes.
        ["PUT doc state", tally({ responses: 400, failed: 40, requestBytes: 720_000 })],
        ["GET doc state", tally({ responses: 100, responseBytes: 150_000 })],
        ["POST query state", tally({ responses: 20, responseBytes: 30_000, items: 10 })],
      ]),
      100,
    );
    expect(rows).toEqual([
      {
        kind: "PUT doc state",
        container: "state",
        operation: "replace",
        perOrder: 4,
        failedPerOrder: 0.4,
        meanDocumentBytes: 2_000,
        itemsPerRequest: 0,
      },
      {
        kind: "GET doc state",
        container: "state",
        operation: "pointRead",
        perOrder: 1,
        failedPerOrder: 0,
        meanDocumentBytes: 1_500,
        itemsPerRequest: 0,
      },
      {
        kind: "POST query state",
        container: "state",
        operation: "query",
        perOrder: 0.2,
        failedPerOrder: 0,
        meanDocumentBytes: 3_000,
        itemsPerRequest: 0.5,
      },
    ]);
  });

  it("gives a query that returned nothing no document size rather than NaN", () => {
    const [row] = storeProfile(
      new Map([["POST query state", 5]]),
      new Map([["POST query state", tally({ responses: 5, responseBytes: 500 })]]),
      5,
    );
    expect(row).toMatchObject({ meanDocumentBytes: 0, itemsPerRequest: 0 });
  });
});

describe("bus, durable and functions per order", () => {
  it("divides the bus counters by the orders and averages the message size", () => {
    const bus = busProfile(
      {
        sent: 130,
        duplicates: 1,
        deliveries: 70,
        completes: 70,
        otherSettlements: 2,
        lockRenewals: 0,
        sentBytes: 65_000,
        largestMessageBytes: 900,
        sentByQueue: { orders: 10, "agent-replies": 30 },
      },
      10,
    );
    expect(bus).toMatchObject({
      sentPerOrder: 13,
      deliveriesPerOrder: 7,
      otherSettlementsPerOrder: 0.2,
      duplicatesPerOrder: 0.1,
      meanMessageBytes: 500,
      sentByQueuePerOrder: { "agent-replies": 3, orders: 1 },
    });
  });

  it("counts only the given orders' instances, every attempt of each", () => {
    const episode = { OrchestratorStarted: 4, TaskScheduled: 2, TimerCreated: 1, EventRaised: 1 };
    const durable = durableProfile(
      [
        { instanceId: "BENCH-1:1", events: episode, cancelledTimers: 1 },
        { instanceId: "BENCH-1:2", events: { ...episode, TimerFired: 1 }, cancelledTimers: 0 },
        { instanceId: "BENCH-2:1", events: episode, cancelledTimers: 1 },
        { instanceId: "BENCH-WARM-1:1", events: episode, cancelledTimers: 1 },
      ],
      new Set(["BENCH-1", "BENCH-2"]),
    );
    expect(durable).toEqual({
      instancesPerOrder: 1.5,
      episodesPerOrder: 6,
      activitiesPerOrder: 3,
      timersCreatedPerOrder: 1.5,
      timersFiredPerOrder: 0.5,
      timersCancelledPerOrder: 1,
      eventsRaisedPerOrder: 1.5,
    });
  });

  it("reads the devhost's Executed lines, failed invocations included", () => {
    const log = [
      "[2026-12-01T10:00:00.000Z] Executed 'Functions.submitOrder' (Succeeded, Id=a1, Duration=12ms)",
      "[2026-12-01T10:00:00.100Z] Executing 'Functions.agentReplies' (Reason='x', Id=a2)",
      "[2026-12-01T10:00:00.200Z] Executed 'Functions.agentReplies' (Failed, Id=a2, Duration=30ms)",
      "[2026-12-01T10:00:00.300Z] Executed 'Functions.agentReplies' (Succeeded, Id=a3, Duration=8ms)",
    ].join("\n");
    const executions = functionExecutions(log);
    expect(Object.fromEntries(executions)).toEqual({
      submitOrder: { count: 1, totalMs: 12 },
      agentReplies: { count: 2, totalMs: 38 },
    });
    expect(functionsProfile(executions, 2, 41.26)).toEqual({
      executionsPerOrder: 1.5,
      executionMsPerOrder: 25,
      executionsByFunctionPerOrder: { agentReplies: 1, submitOrder: 0.5 },
      appCpuMsPerOrder: 41.3,
    });
  });
});
