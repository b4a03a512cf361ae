/**
 * The shared circuit breaker against the Cosmos DB and Service Bus emulators: two instances of the app (two
 * ServiceBreaker objects on one record) stop calling together, exactly one of them probes, and each outage sends
 * one ServiceUnavailable and one ServiceRecovered alert, also when the instance that decided one died before
 * sending it. Time is the breakers' own clock, moved by the test.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BREAKER, breakerRecordId, closedBreaker, recordFailure, type AgentName } from "../../../src/domain";
import { ServiceBreaker } from "../../../src/remote/sharedBreaker";
import { RemoteServiceClient } from "../../../src/remote/remoteService";
import { drain, startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
let containers: AppStack["containers"];
let clock = new Date("2026-12-01T10:00:00.000Z");
const log = { log() {}, warn() {}, error() {} };
const settings = { openSeconds: 10, callTimeoutSeconds: 1 };

beforeAll(async () => {
  stack = await startAppStack();
  containers = stack.containers;
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  await drain(stack.bus, "alerts");
});

/** The breaker of `service` as two instances of the app see it (each test first resets the record). */
function twoInstances(service: AgentName): [ServiceBreaker, ServiceBreaker] {
  const make = () =>
    new ServiceBreaker(service, {
      container: containers.leases,
      settings,
      notifications: stack.deps.notifications,
      counts: { waiting: async () => 12, parked: async () => 9, outlasted: async () => 0 },
      now: () => clock,
    });
  return [make(), make()];
}

async function reset(service: AgentName): Promise<void> {
  const id = breakerRecordId(service);
  await containers.leases
    .item(id, id)
    .delete()
    .catch(() => undefined);
}

const later = (seconds: number) => {
  clock = new Date(clock.getTime() + seconds * 1000);
};

async function open(a: ServiceBreaker): Promise<void> {
  for (let i = 0; i < BREAKER.failureThreshold; i++) await a.onFailure(`ORD-${i % 3}`, log);
}

describe("the shared circuit breaker", () => {
  it("opens for every instance at once, lets one of them probe, and closes for all", async () => {
    await reset("payment");
    const [a, b] = twoInstances("payment");
    await b.current(); // b has a copy of the closed record
    await open(a);
    expect(await a.admit("ORD-X", log)).toEqual({
      allowed: false,
      until: new Date(clock.getTime() + 10_000),
    });
    later(1.5); // past b's copy
    expect(await b.admit("ORD-Y", log)).toMatchObject({ allowed: false });

    later(10);
    const [first, second] = await Promise.all([a.admit("ORD-X", log), b.admit("ORD-Y", log)]);
    expect([first.allowed, second.allowed].sort()).toEqual([false, true]);
    const prober = first.allowed ? a : b;
    await prober.onSuccess(first.allowed ? "ORD-X" : "ORD-Y", log);
    later(1.5);
    expect(await a.admit("ORD-Z", log)).toEqual({ allowed: true });
    expect(await b.admit("ORD-Z", log)).toEqual({ allowed: true });

    const alerts = (await drain(stack.bus, "alerts")) as Array<{
      kind: string;
      service?: string;
      reason: string;
    }>;
    expect(alerts.map((x) => [x.kind, x.service])).toEqual([
      ["ServiceUnavailable", "payment"],
      ["ServiceRecovered", "payment"],
    ]);
    expect(alerts[0]!.reason).toContain("12 orders are not finished");
    expect(alerts[1]!.reason).toContain("9 parked orders resume");
  });

  it("counts every failure of calls that fail at once in one instance (an outage's burst)", async () => {
    // payment, whose first outage's alerts the first test sent: inventory's are the crashed instance's below, and
    // the alerts queue would drop them as duplicates of these.
    await reset("payment");
    const [a] = twoInstances("payment");
    await Promise.all(
      Array.from({ length: BREAKER.failureThreshold }, (_, i) => a.onFailure(`ORD-${i}`, log)),
    );
    expect(await a.admit("ORD-X", log)).toEqual({
      allowed: false,
      until: new Date(clock.getTime() + 10_000),
    });
  });

  it("does not open for one order's failures", async () => {
    await reset("inventory");
    const [a] = twoInstances("inventory");
    for (let i = 0; i < 20; i++) await a.onFailure("POISON", log);
    expect(await a.admit("POISON", log)).toEqual({ allowed: true });
    expect(await drain(stack.bus, "alerts")).toEqual([]);
  });

  it("sends an alert a crashed instance decided, once, from the Supervisor's resend", async () => {
    await reset("inventory");
    const id = breakerRecordId("inventory");
    // What an instance wrote before it died: the opening with its decided alert, never sent.
    let record = closedBreaker("inventory", clock);
    for (let i = 0; i < BREAKER.failureThreshold; i++)
      record = recordFailure(record, `ORD-${i % 3}`, clock, settings, 3) ?? record;
    await containers.leases.items.create(record);
    const [a] = twoInstances("inventory");
    expect(await a.resendUnsentAlerts(log, new Date(clock.getTime() - 1000))).toBe(0);
    expect(await a.resendUnsentAlerts(log, clock)).toBe(1);
    expect(await a.resendUnsentAlerts(log, clock)).toBe(0);
    const alerts = (await drain(stack.bus, "alerts")) as Array<{ kind: string }>;
    expect(alerts.map((x) => x.kind)).toEqual(["ServiceUnavailable"]);
    const { resource } = await containers.leases.item(id, id).read();
    expect(resource.alerts[0].sentAt).not.toBeNull();
  });

  it("makes the agent's client answer without calling, saying until when", async () => {
    await reset("payment");
    const [a] = twoInstances("payment");
    await open(a);
    const client = new RemoteServiceClient(stack.emulators.simulatorUrl + "/payment", {
      maxAttempts: 3,
      attemptTimeoutMs: 500,
      breaker: a,
      now: () => clock,
    });
    const outcome = await client.call(
      "charge",
      { orderId: "ORD-Q", amount: 5, currency: "EUR" },
      {
        idempotencyKey: "ORD-Q:chargePayment:do",
        orderId: "ORD-Q",
        log,
        deadline: new Date(clock.getTime() + 5000),
      },
    );
    expect(outcome).toMatchObject({
      outcome: "transient",
      calls: 0,
      error: { code: "CircuitOpen" },
      unavailableUntil: new Date(clock.getTime() + 10_000),
    });
  });

  it("reports the failure of the call that opened the breaker, not the refusal of the retry after it", async () => {
    await reset("inventory");
    const [a] = twoInstances("inventory");
    for (let i = 0; i < BREAKER.failureThreshold - 1; i++) await a.onFailure(`ORD-${i % 3}`, log);
    const fault = stack.emulators.simulatorUrl + "/_faults";
    await fetch(fault, {
      method: "POST",
      body: JSON.stringify({ service: "inventory", kind: "transient", status: 503 }),
    });
    try {
      const client = new RemoteServiceClient(stack.emulators.simulatorUrl + "/inventory", {
        maxAttempts: 3,
        attemptTimeoutMs: 500,
        initialBackoffMs: 10,
        breaker: a,
        now: () => clock,
      });
      const outcome = await client.call(
        "reserve",
        { orderId: "ORD-S", items: [{ sku: "SKU-1", quantity: 1 }] },
        {
          idempotencyKey: "ORD-S:reserveInventory:do",
          orderId: "ORD-S",
          log,
          deadline: new Date(clock.getTime() + 5000),
        },
      );
      expect(outcome).toMatchObject({ outcome: "transient", calls: 1, unavailableUntil: expect.any(Date) });
      expect(outcome.outcome === "transient" && outcome.error.code).not.toBe("CircuitOpen");
    } finally {
      await fetch(fault, { method: "DELETE" });
    }
  });
});
