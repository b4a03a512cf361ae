// Fault injection: each kind, its matching and counting, probability faults under a seeded random, the
// fault API's validation, and that stop() ends hung and delayed requests.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Fault, Simulator } from "../../../tools/simulator";
import { seededRandom } from "../../../tools/seededRandom";
import { call, ledger, post, startTestSimulator, type Reply } from "../../support/simulator";

let sim: Simulator;
// Scripted randomness for probability faults: each call takes the next value.
let randoms: number[] = [];

beforeAll(async () => {
  sim = await startTestSimulator({
    random: () => {
      const next = randoms.shift();
      if (next === undefined) throw new Error("test consumed more random values than it scripted");
      return next;
    },
  });
});
afterAll(async () => {
  await sim?.stop();
});
beforeEach(async () => {
  randoms = [];
  await call(`${sim.url}/_ledger`, "DELETE");
});

const addFault = async (spec: Record<string, unknown>): Promise<Fault> => {
  const r = await post(`${sim.url}/_faults`, spec);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as unknown as Fault;
};
const charge = (orderId: string, key: string, init?: { signal?: AbortSignal }): Promise<Reply> =>
  post(`${sim.url}/payment/charge`, { orderId, amount: 10, currency: "EUR" }, key, init);
const faults = async (): Promise<Fault[]> => (await call(`${sim.url}/_faults`, "GET")).body.faults as Fault[];

describe("transient and permanent faults", () => {
  it("fails the next N calls with 503 before any effect, then lets calls through", async () => {
    const fault = await addFault({ service: "payment", kind: "transient", count: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await charge("O-1", "O-1:charge:do")).status);
    expect(statuses).toEqual([503, 503, 200]);
    expect(await ledger(sim)).toMatchObject([
      { idempotencyKey: "O-1:charge:do", requests: 1, applied: true },
    ]);
    expect(await faults()).toMatchObject([{ id: fault.id, hits: 2, remaining: 0 }]);
  });

  it("answers a permanent fault with 400 InjectedPermanent by default, or the given 4xx, without an effect", async () => {
    await addFault({ service: "payment", operation: "charge", kind: "permanent", count: 1 });
    await addFault({ service: "payment", operation: "charge", kind: "permanent", count: 1, status: 403 });
    await addFault({ service: "payment", operation: "charge", kind: "transient", count: 1, status: 500 });
    const first = await charge("O-2", "k");
    expect(first.status).toBe(400);
    expect(first.body.code).toBe("InjectedPermanent");
    expect((await charge("O-2", "k")).status).toBe(403);
    const third = await charge("O-2", "k");
    expect(third.status).toBe(500);
    expect(third.body.code).toBe("InjectedTransient");
    expect((await charge("O-2", "k")).status).toBe(200);
    expect(await ledger(sim)).toHaveLength(1);
  });

  it("matches only its service, operation and order", async () => {
    await addFault({ service: "payment", operation: "refund", kind: "transient" });
    await addFault({ service: "inventory", kind: "transient" });
    await addFault({ service: "payment", orderId: "O-other", kind: "transient" });
    expect((await charge("O-3", "O-3:charge:do")).status).toBe(200);
    expect((await post(`${sim.url}/payment/refund`, { orderId: "O-3" }, "O-3:charge:undo")).status).toBe(503);
    expect((await charge("O-other", "O-other:charge:do")).status).toBe(503);
    const reserve = await post(
      `${sim.url}/inventory/reserve`,
      { orderId: "O-3", items: [{ sku: "S", quantity: 1 }] },
      "O-3:reserve:do",
    );
    expect(reserve.status).toBe(503);
  });

  it("lets an overriding fault (an outage) decide before the faults created earlier, which wait until it is gone", async () => {
    await addFault({ service: "payment", orderId: "O-o", operation: "charge", kind: "permanent", count: 1 });
    const outage = await addFault({ service: "payment", kind: "transient", overrides: true });
    const before = new Date().toISOString();
    expect((await charge("O-o", "O-o:charge:do")).status).toBe(503);
    expect((await charge("O-x", "O-x:charge:do")).status).toBe(503);
    expect((await faults()).find((f) => f.id === outage.id)).toMatchObject({
      hits: 2,
      hitsByOrder: { "O-o": 1, "O-x": 1 },
      hitLog: [
        { orderId: "O-o", at: expect.any(String) },
        { orderId: "O-x", at: expect.any(String) },
      ],
    });
    const [first] = (await faults()).find((f) => f.id === outage.id)!.hitLog;
    expect(first!.at >= before).toBe(true);
    await call(`${sim.url}/_faults/${outage.id}`, "DELETE");
    expect((await charge("O-o", "O-o:charge:do")).status).toBe(400);
  });

  it("fires a probability fault when random() is below p", async () => {
    await addFault({ service: "payment", kind: "transient", probability: 0.5 });
    randoms = [0.1, 0.9, 0.49, 0.5, 0.0];
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await charge(`O-p${i}`, `O-p${i}:charge:do`)).status);
    expect(statuses).toEqual([503, 200, 503, 200, 503]);
    expect(randoms).toEqual([]);
    expect(await faults()).toMatchObject([{ hits: 3, remaining: null }]);
  });
});

it("repeats the same fault sequence for the same seed", async () => {
  const run = async (): Promise<number[]> => {
    const seeded = await startTestSimulator({ random: seededRandom(42) });
    try {
      seeded.injectFault({ service: "payment", kind: "transient", probability: 0.3 });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i += 1) {
        const r = await post(`${seeded.url}/payment/refund`, { orderId: `O-${i}` }, `O-${i}:charge:undo`);
        statuses.push(r.status);
      }
      return statuses;
    } finally {
      await seeded.stop();
    }
  };
  const draws = seededRandom(42);
  const expected = Array.from({ length: 30 }, () => (draws() < 0.3 ? 503 : 200));
  expect(expected).toContain(503);
  expect(expected).toContain(200);
  expect(await run()).toEqual(expected);
  expect(await run()).toEqual(expected);
});

describe("latency, hang and drop-response", () => {
  it("delays a call by latencyMs, then answers normally", async () => {
    await addFault({ service: "payment", kind: "latency", latencyMs: 300, count: 1 });
    const started = performance.now();
    const slow = await charge("O-4", "O-4:charge:do");
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(slow.status).toBe(200);
    expect(await ledger(sim)).toMatchObject([{ applied: true, requests: 1 }]);
  });

  it("applies the effect after the delay even when the caller gave up first (remote slower than the deadline)", async () => {
    await addFault({ service: "payment", kind: "latency", latencyMs: 500, count: 1 });
    await expect(charge("O-5", "O-5:charge:do", { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(await ledger(sim)).toEqual([]);
    await expect
      .poll(async () => (await ledger(sim)).map((e) => e.applied), { timeout: 5_000 })
      .toEqual([true]);
  });

  it("hangs without an effect until the caller gives up", async () => {
    await addFault({ service: "payment", kind: "hang", count: 1 });
    await expect(charge("O-6", "O-6:charge:do", { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect(await ledger(sim)).toEqual([]);
    expect((await charge("O-6", "O-6:charge:do")).status).toBe(200);
  });

  it("applies the effect, drops the response, and replays the stored response to the retry", async () => {
    await addFault({ service: "payment", kind: "drop-response", count: 1 });
    await expect(charge("O-7", "O-7:charge:do")).rejects.toThrow(/fetch failed/);
    const [entry] = await ledger(sim);
    expect(entry).toMatchObject({ requests: 1, applied: true, status: 200 });

    const retry = await charge("O-7", "O-7:charge:do");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.chargeId).toBe(entry?.effect.chargeId);
    expect(await ledger(sim)).toMatchObject([{ requests: 2, applied: true }]);
  });
});

describe("answer", () => {
  const rawCharge = (orderId: string) =>
    fetch(`${sim.url}/payment/charge`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `${orderId}:charge:do` },
      body: JSON.stringify({ orderId, amount: 10, currency: "EUR" }),
    });

  it("answers in the service's place, as told, before any effect", async () => {
    await addFault({
      service: "payment",
      kind: "answer",
      status: 502,
      contentType: "text/plain",
      body: "upstream gone",
      count: 1,
    });
    await addFault({ service: "payment", kind: "answer", status: 204, contentType: "", count: 1 });
    await addFault({ service: "payment", kind: "answer", count: 1 });
    const told = await rawCharge("O-A");
    expect([told.status, told.headers.get("content-type"), await told.text()]).toEqual([
      502,
      "text/plain",
      "upstream gone",
    ]);
    const empty = await rawCharge("O-A");
    expect([empty.status, empty.headers.get("content-type"), await empty.text()]).toEqual([204, null, ""]);
    const page = await rawCharge("O-A");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toMatch(/^<html>/);
    expect(await ledger(sim)).toEqual([]);
    expect((await rawCharge("O-A")).status).toBe(200);
    expect(await ledger(sim)).toMatchObject([{ orderId: "O-A", applied: true, requests: 1 }]);
  });
});

describe("fault API", () => {
  it("lists, deletes one and clears all faults", async () => {
    const a = await addFault({ service: "payment", kind: "transient" });
    const b = await addFault({ service: "payment", operation: "refund", kind: "latency" });
    expect(b).toMatchObject({ latencyMs: 1000, remaining: null, hits: 0 });
    expect((await faults()).map((f) => f.id)).toEqual([a.id, b.id]);
    expect((await call(`${sim.url}/_faults/${a.id}`, "DELETE")).status).toBe(204);
    expect((await call(`${sim.url}/_faults/${a.id}`, "DELETE")).status).toBe(404);
    expect((await faults()).map((f) => f.id)).toEqual([b.id]);
    expect((await call(`${sim.url}/_faults`, "DELETE")).status).toBe(204);
    expect(await faults()).toEqual([]);
  });

  it.each([
    [{ service: "billing", kind: "transient" }, "service"],
    [{ service: "payment", operation: "reserve", kind: "transient" }, "operation"],
    [{ service: "payment", kind: "flaky" }, "kind"],
    [{ service: "payment", kind: "transient", count: 1, probability: 0.5 }, "probability"],
    [{ service: "payment", kind: "transient", probability: 2 }, "probability"],
    [{ service: "payment", kind: "transient", status: 404 }, "status"],
    [{ service: "payment", kind: "permanent", status: 503 }, "status"],
    [{ service: "payment", kind: "hang", latencyMs: 5 }, "latencyMs"],
    [{ service: "payment", kind: "answer", status: 101 }, "status"],
    [{ service: "payment", kind: "transient", body: "<html>" }, "body"],
    [{ service: "payment", kind: "permanent", contentType: "text/html" }, "contentType"],
    [{ service: "payment", kind: "transient", probabilty: 0.5 }, "body"],
  ])("refuses %j with 400 naming %s", async (spec, field) => {
    const r = await post(`${sim.url}/_faults`, spec);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(new RegExp(`(^|; )${field}: `));
  });
});

/** Observes the outcome at once, so a rejection before the test awaits it is not reported as unhandled. */
const settled = (p: Promise<unknown>): Promise<"answered" | "failed"> =>
  p.then(
    () => "answered" as const,
    () => "failed" as const,
  );

it("stop() ends hung and delayed requests instead of waiting for them", async () => {
  const other = await startTestSimulator();
  other.injectFault({ service: "payment", operation: "charge", kind: "hang" });
  other.injectFault({ service: "payment", operation: "refund", kind: "latency", latencyMs: 600_000 });
  const hung = settled(
    post(`${other.url}/payment/charge`, { orderId: "O", amount: 1, currency: "EUR" }, "h"),
  );
  const delayed = settled(post(`${other.url}/payment/refund`, { orderId: "O" }, "d"));
  await expect.poll(() => other.faults().map((f) => f.hits)).toEqual([1, 1]);
  await other.stop();
  expect(await hung).toBe("failed");
  expect(await delayed).toBe("failed");
  expect(other.ledger()).toEqual([]);
});
