// The order-shape benchmark stands for the real order only while it makes the same hops (messages, durable work,
// store requests, remote calls), carrying the real order's documents and messages.
import { describe, expect, it } from "vitest";
import {
  hopMismatches,
  hopsOf,
  pairedRatios,
  shapePayloads,
  sizeMismatches,
} from "../../../bench/orderShape";
import { SHAPE_QUEUES, STATUS_QUEUE } from "../../../bench/orderShape/shape";
import { orderProfile, storeRow } from "../../support/orderProfiles";

const profile = orderProfile({
  store: [
    storeRow({ kind: "POST docs orders", operation: "create", meanDocumentBytes: 433 }),
    storeRow({ kind: "POST docs state", operation: "create", meanDocumentBytes: 1_388 }),
    storeRow({ kind: "PUT doc state", operation: "replace", perOrder: 4, meanDocumentBytes: 2_678 }),
    storeRow({ kind: "PUT doc leases", operation: "replace", perOrder: 0.86, meanDocumentBytes: 5_101 }),
    storeRow({ kind: "POST query state", operation: "query", perOrder: 0.23 }),
    storeRow({ kind: "POST plan state", operation: "metadata", perOrder: 0.23 }),
  ],
});
const order = hopsOf(profile, 3);

describe("the order shape's hops", () => {
  it("are the real order's messages, deliveries, activities, raised events, remote calls and store requests", () => {
    expect(order).toEqual({
      messagesPerOrder: 13,
      deliveriesPerOrder: 7,
      activitiesPerOrder: 4,
      eventsRaisedPerOrder: 3,
      remoteCallsPerOrder: 3,
      // Query plans are metadata, which the gateway answers: not a hop.
      storeRequestsPerOrder: {
        "POST docs orders": 1,
        "POST docs state": 1,
        "PUT doc state": 4,
        "PUT doc leases": 0.86,
        "POST query state": 0.23,
      },
    });
    // A shard replace per order and no query are within half a request of 0.86 and 0.23.
    const shape = {
      ...order,
      messagesPerOrder: 13.4,
      storeRequestsPerOrder: {
        "POST docs orders": 1,
        "POST docs state": 1,
        "PUT doc state": 4,
        "PUT doc leases": 1,
      },
    };
    expect(hopMismatches(shape, order)).toEqual([]);
  });

  it("are named where the shape makes half a hop more or fewer than the order", () => {
    const shape = {
      ...order,
      messagesPerOrder: 7,
      activitiesPerOrder: 3,
      remoteCallsPerOrder: 0,
      storeRequestsPerOrder: { ...order.storeRequestsPerOrder, "PUT doc state": 3, "GET doc state": 1 },
    };
    expect(hopMismatches(shape, order)).toEqual([
      "messagesPerOrder: the shape 7, the order 13",
      "activitiesPerOrder: the shape 3, the order 4",
      "remoteCallsPerOrder: the shape 0, the order 3",
      "store requests GET doc state: the shape 1, the order 0",
      "store requests PUT doc state: the shape 3, the order 4",
    ]);
  });
});

describe("the shape's payloads", () => {
  const state = { id: "O-1", orderId: "O-1", processState: "Processing", steps: [{ name: "reserve" }] };
  const documents = {
    "POST docs orders": { id: "O-1", orderId: "O-1", lines: [] },
    "POST docs state": { ...state, processState: "Pending" },
    "PUT doc state": state,
    "PUT doc leases": { id: "admission:0", orderId: "admission:0", entries: [] },
    "PUT doc orders": { id: "O-1", orderId: "O-1" },
  };
  const messages = Object.fromEntries(
    SHAPE_QUEUES.map((queue) => [queue, { body: { orderId: "O-1", queue }, correlationId: "O-1" }]),
  );

  it("are the sampled documents it writes and the sampled messages of each queue it sends to", () => {
    const payloads = shapePayloads({ payloads: { documents, messages }, store: [] });
    expect(payloads.documents).toEqual({
      order: documents["POST docs orders"],
      stateCreated: documents["POST docs state"],
      state: documents["PUT doc state"],
      shard: documents["PUT doc leases"],
    });
    expect(Object.keys(payloads.messages).sort()).toEqual([...SHAPE_QUEUES].sort());
    expect(payloads.messages[STATUS_QUEUE]).toEqual(messages[STATUS_QUEUE]);
  });

  it("come with the claim rounds' queries per order that the real order's profile shows, or none", () => {
    expect(shapePayloads({ ...profile, payloads: { documents, messages } }).claimQueriesPerOrder).toBe(0.23);
    expect(shapePayloads({ payloads: { documents, messages }, store: [] }).claimQueriesPerOrder).toBe(0);
  });

  it("cannot be taken from a profile that sampled none, or not one the shape needs", () => {
    expect(() => shapePayloads({ store: [] })).toThrow(/no sampled payloads: run endToEnd again/);
    const { "PUT doc leases": _leases, ...noShard } = documents;
    expect(() => shapePayloads({ payloads: { documents: noShard, messages }, store: [] })).toThrow(
      /no sampled document of PUT doc leases/,
    );
    const { [STATUS_QUEUE]: _status, ...noStatus } = messages;
    expect(() => shapePayloads({ payloads: { documents, messages: noStatus }, store: [] })).toThrow(
      new RegExp(`no sampled message of ${STATUS_QUEUE}`),
    );
  });

  it("must be about as large as the order's: messages, and each document the shape writes", () => {
    const order = profile;
    expect(sizeMismatches(order, order)).toEqual([]);
    const shape = {
      bus: { ...order.bus, meanMessageBytes: order.bus.meanMessageBytes * 1.5 },
      store: order.store.map((row) =>
        row.kind === "PUT doc state" ? { ...row, meanDocumentBytes: 2_000 } : row,
      ),
    };
    expect(sizeMismatches(shape, order)).toEqual([
      `mean message bytes: the shape ${Math.round(order.bus.meanMessageBytes * 1.5)}, the order ${Math.round(order.bus.meanMessageBytes)}`,
      "mean document bytes of PUT doc state: the shape 2000, the order 2678",
    ]);
  });
});

describe("the pairs of runs", () => {
  it("give each pair's ratio and their median", () => {
    const pairs = [
      { app: 50, shape: 73 },
      { app: 54, shape: 69 },
      { app: 48, shape: 70 },
    ];
    expect(pairedRatios(pairs)).toEqual({
      pairs: 3,
      medianRatio: 0.686,
      "pair1.appOrdersPerSec": 50,
      "pair1.shapeOrdersPerSec": 73,
      "pair1.ratio": 0.685,
      "pair2.appOrdersPerSec": 54,
      "pair2.shapeOrdersPerSec": 69,
      "pair2.ratio": 0.783,
      "pair3.appOrdersPerSec": 48,
      "pair3.shapeOrdersPerSec": 70,
      "pair3.ratio": 0.686,
    });
    expect(pairedRatios(pairs.slice(0, 2)).medianRatio).toBe(0.734);
  });
});
