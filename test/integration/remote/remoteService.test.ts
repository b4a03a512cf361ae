/**
 * The agents' remote call through cockatiel against the simulator over real HTTP: classification, retries inside
 * the deadline, and idempotent replays after a lost response. The shared circuit breaker, which needs the state
 * store, has its own tests (sharedBreaker.test.ts); here every call is let through and counted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RemoteServiceClient, type CallGate } from "../../../src/remote/remoteService";
import { startSimulator, type Simulator } from "../../../tools/simulator";

let sim: Simulator;
let n = 0;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, paymentLimit: 100 });
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

/** A gate that lets every call through and counts what it was told. */
function countingGate(): CallGate & { failures: number; successes: number } {
  const gate = {
    failures: 0,
    successes: 0,
    admit: async () => ({ allowed: true as const }),
    onFailure: async () => {
      gate.failures++;
    },
    onSuccess: async () => {
      gate.successes++;
    },
  };
  return gate;
}

const log = { log() {}, warn() {}, error() {} };

function client(
  service: "inventory" | "payment",
  overrides: Partial<ConstructorParameters<typeof RemoteServiceClient>[1]> = {},
) {
  return new RemoteServiceClient(sim.serviceUrls[service], {
    maxAttempts: 3,
    attemptTimeoutMs: 500,
    initialBackoffMs: 10,
    maxBackoffMs: 50,
    breaker: countingGate(),
    ...overrides,
  });
}

const inSeconds = (s: number) => new Date(Date.now() + s * 1000);
const key = () => `ORD-${++n}:chargePayment:do`;

describe("RemoteServiceClient", () => {
  it("returns ok with the service's answer on a 2xx", async () => {
    const outcome = await client("payment").call(
      "charge",
      { orderId: "ORD-A", amount: 20, currency: "EUR" },
      { idempotencyKey: key(), orderId: "ORD-A", log, deadline: inSeconds(5) },
    );
    expect(outcome).toMatchObject({
      outcome: "ok",
      status: 200,
      calls: 1,
      body: { orderId: "ORD-A", amount: 20 },
    });
  });

  it("classifies a business refusal as permanent and does not retry it", async () => {
    const outcome = await client("payment").call(
      "charge",
      { orderId: "ORD-B", amount: 500, currency: "EUR" },
      { idempotencyKey: key(), orderId: "ORD", log, deadline: inSeconds(5) },
    );
    expect(outcome).toMatchObject({
      outcome: "permanent",
      status: 402,
      calls: 1,
      error: { code: "PaymentDeclined" },
    });
  });

  it("retries transient failures and succeeds, applying the effect once", async () => {
    sim.injectFault({ service: "payment", operation: "charge", kind: "transient", count: 2 });
    const k = key();
    const outcome = await client("payment").call(
      "charge",
      { orderId: "ORD-C", amount: 5, currency: "EUR" },
      {
        idempotencyKey: k,
        orderId: "ORD-C",
        log,
        deadline: inSeconds(5),
      },
    );
    expect(outcome).toMatchObject({ outcome: "ok", calls: 3 });
    expect(sim.ledger().filter((e) => e.idempotencyKey === k && e.applied)).toHaveLength(1);
  });

  it("makes exactly maxAttempts calls against a service that always fails, then reports transient", async () => {
    sim.injectFault({ service: "inventory", kind: "transient", count: 1000 });
    const outcome = await client("inventory", { maxAttempts: 4 }).call(
      "reserve",
      { orderId: "ORD-D", items: [{ sku: "SKU-1", quantity: 1 }] },
      { idempotencyKey: key(), orderId: "ORD", log, deadline: inSeconds(5) },
    );
    expect(outcome).toMatchObject({ outcome: "transient", calls: 4 });
    expect(outcome.outcome === "transient" && outcome.error.code).toBeTruthy();
  });

  it("times out a slow attempt and starts no call after the deadline", async () => {
    sim.injectFault({ service: "inventory", kind: "latency", latencyMs: 2_000, count: 10 });
    const started = Date.now();
    const outcome = await client("inventory", { attemptTimeoutMs: 150, maxAttempts: 10 }).call(
      "reserve",
      { orderId: "ORD-E", items: [{ sku: "SKU-1", quantity: 1 }] },
      { idempotencyKey: key(), orderId: "ORD", log, deadline: new Date(Date.now() + 400) },
    );
    expect(outcome).toMatchObject({ outcome: "transient" });
    // Every call started before the deadline: at most 400 ms / (150 ms timeout) + 1.
    expect(outcome.calls).toBeLessThanOrEqual(3);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("cuts a call in flight at the deadline when the deadline comes before the attempt's timeout", async () => {
    sim.injectFault({ service: "inventory", kind: "latency", latencyMs: 2_000, count: 1 });
    const started = Date.now();
    const outcome = await client("inventory", { attemptTimeoutMs: 5_000 }).call(
      "reserve",
      { orderId: "ORD-F", items: [{ sku: "SKU-1", quantity: 1 }] },
      { idempotencyKey: key(), orderId: "ORD", log, deadline: new Date(Date.now() + 300) },
    );
    expect(outcome).toMatchObject({ outcome: "transient", calls: 1 });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("returns the first response for a repeat after the response was dropped", async () => {
    sim.injectFault({ service: "payment", operation: "charge", kind: "drop-response", count: 1 });
    const k = key();
    const body = { orderId: "ORD-F", amount: 7, currency: "EUR" };
    const first = await client("payment", { maxAttempts: 1 }).call("charge", body, {
      idempotencyKey: k,
      orderId: "ORD-F",
      log,
      deadline: inSeconds(5),
    });
    expect(first.outcome).toBe("transient");
    const second = await client("payment").call("charge", body, {
      idempotencyKey: k,
      orderId: "ORD-F",
      log,
      deadline: inSeconds(5),
    });
    expect(second).toMatchObject({ outcome: "ok" });
    const entries = sim.ledger().filter((e) => e.idempotencyKey === k);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ applied: true, requests: 2 });
  });

  it("tells the breaker of every call: failures (5xx, timeouts) and successes (2xx, 4xx refusals)", async () => {
    sim.injectFault({ service: "payment", operation: "charge", kind: "transient", count: 2 });
    const gate = countingGate();
    const c = client("payment", { breaker: gate });
    await c.call(
      "charge",
      { orderId: "ORD-H", amount: 5, currency: "EUR" },
      { idempotencyKey: key(), orderId: "ORD-H", log, deadline: inSeconds(5) },
    );
    await c.call(
      "charge",
      { orderId: "ORD-I", amount: 500, currency: "EUR" },
      { idempotencyKey: key(), orderId: "ORD-I", log, deadline: inSeconds(5) },
    );
    expect(gate).toMatchObject({ failures: 2, successes: 2 });
  });
});
