// The generic service: a service the process declares with no behaviour (tools/simulator/behaviours.ts) is still
// fully served: do and undo with idempotency keys, the ledger, closed orders and every fault kind. `warehouse`
// stands for a fork's new service; the simulator is given it as the declaration would.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DECLARED_SERVICES, type Simulator } from "../../../tools/simulator";
import { call, ledger, post, startTestSimulator } from "../../support/simulator";

let sim: Simulator;
beforeAll(async () => {
  sim = await startTestSimulator({
    services: { ...DECLARED_SERVICES, warehouse: { notify: "do", cancelNotice: "undo" } },
  });
});
afterAll(async () => {
  await sim?.stop();
});
beforeEach(async () => {
  await call(`${sim.url}/_ledger`, "DELETE");
});

const notify = (orderId: string, key: string, init?: { signal?: AbortSignal }) =>
  post(`${sim.url}/warehouse/notify`, { orderId, dock: 7 }, key, init);

it("serves every declared operation and the extra service's, and nothing a service does not declare", async () => {
  const routes = [
    ...Object.entries(DECLARED_SERVICES).flatMap(([s, ops]) => Object.keys(ops).map((op) => `${s}/${op}`)),
    "warehouse/notify",
    "warehouse/cancelNotice",
  ];
  expect(routes).toHaveLength(8);
  for (const route of routes) {
    // Served: the body is validated (400 naming orderId) rather than the route unknown (404).
    const r = await post(`${sim.url}/${route}`, {}, "k");
    expect([route, r.status, r.body.message]).toEqual([route, 400, expect.stringMatching(/^orderId: /)]);
  }
  expect((await post(`${sim.url}/warehouse/ship`, { orderId: "O" }, "k")).status).toBe(404);
  expect(sim.serviceUrls.warehouse).toBe(`${sim.url}/warehouse`);
});

it("is not served by a simulator on the declaration alone", async () => {
  const plain = await startTestSimulator();
  try {
    expect((await post(`${plain.url}/warehouse/notify`, { orderId: "O" }, "k")).status).toBe(404);
    expect((await post(`${plain.url}/_faults`, { service: "warehouse", kind: "hang" })).status).toBe(400);
  } finally {
    await plain.stop();
  }
});

describe("do and undo", () => {
  it("applies a do once per key, answering an id named after the service, and replays it", async () => {
    const first = await notify("O-1", "O-1:notify:do");
    expect(first).toMatchObject({ status: 200, body: { orderId: "O-1", id: "WAREHOUSE-000001" } });
    const again = await notify("O-1", "O-1:notify:do");
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await ledger(sim)).toMatchObject([
      {
        service: "warehouse",
        operation: "notify",
        idempotencyKey: "O-1:notify:do",
        orderId: "O-1",
        requests: 2,
        applied: true,
        status: 200,
        effect: { orderId: "O-1", id: "WAREHOUSE-000001" },
      },
    ]);
  });

  it("undoes the do it names, once per key, then refuses a later do for the order", async () => {
    const done = await notify("O-2", "O-2:notify:do");
    const undo = () =>
      post(`${sim.url}/warehouse/cancelNotice`, { orderId: "O-2", id: done.body.id }, "O-2:notify:undo");
    const undone = await undo();
    expect(undone).toMatchObject({
      status: 200,
      body: { orderId: "O-2", undone: [done.body.id], noop: false },
    });
    expect((await undo()).headers.get("idempotent-replayed")).toBe("true");
    expect((await notify("O-2", "O-2:notify:do:2")).body.code).toBe("AlreadyCompensated");
    expect(await ledger(sim)).toMatchObject([
      { operation: "notify", applied: true },
      { operation: "cancelNotice", requests: 2, applied: true, effect: { tombstone: true } },
      { operation: "notify", applied: false, status: 409 },
    ]);
  });

  it("undoes the order's effects without an id, refuses an id that is not the order's, and validates orderId", async () => {
    await notify("O-3", "O-3:notify:do");
    const wrong = await post(
      `${sim.url}/warehouse/cancelNotice`,
      { orderId: "O-3", id: "WAREHOUSE-999999" },
      "w",
    );
    expect(wrong.status).toBe(404);
    const undone = await post(`${sim.url}/warehouse/cancelNotice`, { orderId: "O-3" }, "O-3:notify:undo");
    expect(undone.body).toMatchObject({ undone: ["WAREHOUSE-000001"], noop: false });
    const bad = await post(`${sim.url}/warehouse/notify`, { orderId: 3 }, "bad");
    expect(bad).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^orderId: /) } });
  });
});

describe("faults", () => {
  it("a transient fault answers 503 before any effect", async () => {
    expect(
      (await post(`${sim.url}/_faults`, { service: "warehouse", kind: "transient", count: 1 })).status,
    ).toBe(201);
    expect((await notify("O-4", "O-4:notify:do")).body.code).toBe("InjectedTransient");
    expect(await ledger(sim)).toEqual([]);
    expect((await notify("O-4", "O-4:notify:do")).status).toBe(200);
  });

  it("a hang fault on one operation never answers and applies nothing", async () => {
    sim.injectFault({ service: "warehouse", operation: "notify", kind: "hang", count: 1 });
    await expect(notify("O-5", "O-5:notify:do", { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect(await ledger(sim)).toEqual([]);
    expect(sim.faults()).toMatchObject([{ service: "warehouse", hits: 1 }]);
  });

  it("permanent, latency and drop-response hit it too", async () => {
    sim.injectFault({ service: "warehouse", kind: "permanent", status: 422, count: 1 });
    expect((await notify("O-6", "O-6:notify:do")).status).toBe(422);
    sim.injectFault({ service: "warehouse", kind: "latency", latencyMs: 200, count: 1 });
    const started = performance.now();
    expect((await notify("O-6", "O-6:notify:do")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    sim.injectFault({ service: "warehouse", operation: "cancelNotice", kind: "drop-response", count: 1 });
    await expect(post(`${sim.url}/warehouse/cancelNotice`, { orderId: "O-6" }, "u")).rejects.toThrow();
    expect(await ledger(sim)).toMatchObject([
      { operation: "notify", applied: true },
      { operation: "cancelNotice", applied: true },
    ]);
  });

  it("refuses a fault naming an operation the service does not declare", async () => {
    const r = await post(`${sim.url}/_faults`, { service: "warehouse", operation: "ship", kind: "hang" });
    expect(r).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("notify, cancelNotice") },
    });
  });
});
