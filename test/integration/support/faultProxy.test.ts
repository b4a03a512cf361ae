/**
 * The fault proxies (test/support/faultProxy.ts) through the real SDKs against the embedded emulators: a
 * CosmosClient through the HTTP proxy, ServiceBusClients through the TCP proxy, and clients straight to the
 * emulators reading the truth. What each test pins is also what the SDK does with the fault (retries it, or
 * hands it to the app), which the app's own retry layer is built on.
 */
import { CosmosClient, type Container } from "@azure/cosmos";
import { ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";
import { EMULATOR_KEY } from "devhost/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  isOperation,
  requestTimeout,
  retryWith,
  serviceUnavailable,
  startFaultyStack,
  throttled,
  type FaultyStack,
} from "../../support/faultProxy";
import { startE2E } from "../../support/e2e";
import { e2eOrder } from "../../support/e2eOrders";
import { pollUntil } from "../../support/wait";

/** The SDK's request timeout in these tests: a stalled request fails after about this long. */
const REQUEST_TIMEOUT_MS = 1000;

let faulty: FaultyStack;
let cosmos: CosmosClient;
let direct: CosmosClient;
/** The state container through the proxy, and straight to the stand-in. */
let proxied: Container;
let truth: Container;
let bus: ServiceBusClient;
let directBus: ServiceBusClient;

beforeAll(async () => {
  faulty = await startFaultyStack();
  const database = faulty.stack.cosmos.database;
  // As src/store/cosmos.ts builds it for a plain-http endpoint: key auth, endpoint discovery off.
  cosmos = new CosmosClient({
    endpoint: faulty.proxied.cosmosEndpoint,
    key: EMULATOR_KEY,
    connectionPolicy: { enableEndpointDiscovery: false, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  direct = new CosmosClient({
    endpoint: faulty.direct.cosmosEndpoint,
    key: EMULATOR_KEY,
    connectionPolicy: { enableEndpointDiscovery: false },
  });
  proxied = cosmos.database(database).container("state");
  truth = direct.database(database).container("state");
  bus = new ServiceBusClient(faulty.proxied.serviceBusConnectionString);
  directBus = new ServiceBusClient(faulty.direct.serviceBusConnectionString);
});

afterAll(async () => {
  await bus?.close();
  await directBus?.close();
  cosmos?.dispose();
  direct?.dispose();
  await faulty?.stop();
});

let counter = 0;
const doc = (prefix: string) => {
  const id = `${prefix}-${process.pid}-${++counter}`;
  return { id, orderId: id, note: prefix };
};

/** The rejection of `promise`, and how long it took to come. */
async function failure(promise: Promise<unknown>): Promise<{ error: Record<string, unknown>; ms: number }> {
  const start = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error: error as Record<string, unknown>, ms: Date.now() - start };
  }
  throw new Error("expected a rejection");
}

describe("Cosmos DB through the HTTP fault proxy", () => {
  it("forwards reads and creates in pass mode", async () => {
    const item = doc("pass");
    const before = faulty.proxies.cosmos.stats().forwarded;
    await proxied.items.create(item);
    const { resource } = await proxied.item(item.id, item.orderId).read<typeof item>();
    expect(resource).toMatchObject(item);
    expect((await truth.item(item.id, item.orderId).read()).resource).toMatchObject(item);
    expect(faulty.proxies.cosmos.stats().forwarded).toBeGreaterThanOrEqual(before + 2);
  });

  it("answers 503 to creates only; the SDK hands it over at once, and a read still works", async () => {
    const existing = doc("existing");
    await truth.items.create(existing);
    const rule = faulty.proxies.cosmos.add({
      path: /\/colls\/state\/docs/,
      when: isOperation("create"),
      action: { kind: "status", error: serviceUnavailable() },
    });
    try {
      const item = doc("503");
      const { error } = await failure(proxied.items.create(item));
      expect(error).toMatchObject({ code: 503, substatus: 21008 });
      expect(error.activityId).toEqual(expect.any(String));
      expect(error.message).toContain("Service is currently unavailable");
      // Endpoint discovery off: no failover retry, one request only.
      expect(rule.hits).toBe(1);
      expect((await proxied.item(existing.id, existing.orderId).read()).resource).toMatchObject(existing);
      expect((await truth.item(item.id, item.orderId).read()).statusCode).toBe(404);
    } finally {
      rule.remove();
    }
  });

  it("throttles two creates; the SDK's own throttle retry gets the third through", async () => {
    const rule = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "status", error: throttled(20) },
      count: 2,
    });
    const item = doc("429");
    const response = await proxied.items.create(item);
    expect(response.statusCode).toBe(201);
    expect(rule.hits).toBe(2);
    expect(rule.active).toBe(false);
    expect(response.headers["x-ms-throttle-retry-count"]).toBe(2);
    expect((await truth.item(item.id, item.orderId).read()).resource).toMatchObject(item);
  });

  it("throttling that outlasts the SDK's 9 retries reaches the caller as a 429", async () => {
    const rule = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "status", error: throttled(1) },
      count: 50,
    });
    try {
      const { error } = await failure(proxied.items.create(doc("429-past")));
      expect(error).toMatchObject({ code: 429, substatus: 3200, retryAfterInMs: 1 });
      expect(rule.hits).toBe(10);
    } finally {
      rule.remove();
    }
  });

  it.each([
    ["408", requestTimeout(), 408],
    ["449", retryWith(), 449],
  ])("a %s reaches the caller unretried", async (_name, error, code) => {
    const rule = faulty.proxies.cosmos.add({
      method: "PUT",
      path: /\/docs\//,
      action: { kind: "status", error },
    });
    try {
      const item = doc(`replace-${code}`);
      await truth.items.create(item);
      const failed = await failure(proxied.item(item.id, item.orderId).replace({ ...item, note: "changed" }));
      expect(failed.error).toMatchObject({ code });
      expect(rule.hits).toBe(1);
      expect((await truth.item(item.id, item.orderId).read()).resource).toMatchObject({ note: item.note });
    } finally {
      rule.remove();
    }
  });

  it("stalls a read until the SDK's request timeout gives up, once", async () => {
    const item = doc("stall");
    await truth.items.create(item);
    const rule = faulty.proxies.cosmos.add({ method: "GET", path: /\/docs\//, action: { kind: "stall" } });
    try {
      const { error, ms } = await failure(proxied.item(item.id, item.orderId).read());
      expect(error).toMatchObject({ code: "TimeoutError" });
      expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
      // Endpoint discovery off: the timeout failover policy does not retry, even a read.
      expect(rule.hits).toBe(1);
      // The SDK closed its end; the proxy lets go of the request.
      await pollUntil(
        async () => faulty.proxies.cosmos.stats().stalled,
        (stalled) => stalled === 0,
        (stalled) => `${stalled} requests still stalled`,
        { timeoutMs: 2000, intervalMs: 20 },
      );
    } finally {
      rule.remove();
    }
  });

  it("a stalled create that reached the store: the caller sees a timeout, the document is there", async () => {
    const rule = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "stall", forward: true },
      count: 1,
    });
    const item = doc("lost-answer");
    const { error } = await failure(proxied.items.create(item));
    expect(error).toMatchObject({ code: "TimeoutError" });
    expect((await truth.item(item.id, item.orderId).read()).resource).toMatchObject(item);
    // The caller's retry of the create now meets its own write.
    await expect(proxied.items.create(item)).rejects.toMatchObject({ code: 409 });
    expect(rule.hits).toBe(1);
  });

  it("a reset connection: the SDK retries a read (after 1 s), not a create", async () => {
    const item = doc("reset");
    await truth.items.create(item);
    const reads = faulty.proxies.cosmos.add({
      method: "GET",
      path: /\/docs\//,
      action: { kind: "reset" },
      count: 1,
    });
    expect((await proxied.item(item.id, item.orderId).read()).resource).toMatchObject(item);
    expect(reads.hits).toBe(1);
    const creates = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "reset" },
      count: 1,
    });
    const { error } = await failure(proxied.items.create(doc("reset-create")));
    expect(error).toMatchObject({ code: "ECONNRESET" });
    expect(creates.hits).toBe(1);
  });

  it("delays a request, then forwards it", async () => {
    const item = doc("delay");
    await truth.items.create(item);
    faulty.proxies.cosmos.add({
      method: "GET",
      path: /\/docs\//,
      action: { kind: "delay", ms: 300 },
      count: 1,
    });
    const start = Date.now();
    expect((await proxied.item(item.id, item.orderId).read()).resource).toMatchObject(item);
    expect(Date.now() - start).toBeGreaterThanOrEqual(290);
  });

  it("retires a rule after its duration, and clear() retires the rest", async () => {
    const timed = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "status", error: serviceUnavailable() },
      durationMs: 150,
    });
    await expect(proxied.items.create(doc("timed"))).rejects.toMatchObject({ code: 503 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(timed.active).toBe(false);
    expect((await proxied.items.create(doc("timed"))).statusCode).toBe(201);
    const forever = faulty.proxies.cosmos.add({ action: { kind: "status", error: serviceUnavailable() } });
    faulty.proxies.clear();
    expect(forever.active).toBe(false);
    expect((await proxied.items.create(doc("cleared"))).statusCode).toBe(201);
  });
});

describe("Service Bus through the TCP fault proxy", () => {
  const QUEUE = "status-demo";

  /** Bodies on the queue now, read straight from the emulator. */
  async function received(): Promise<unknown[]> {
    const receiver = directBus.createReceiver(QUEUE, { receiveMode: "receiveAndDelete" });
    try {
      return (await receiver.receiveMessages(50, { maxWaitTimeInMs: 300 })).map((m) => m.body as unknown);
    } finally {
      await receiver.close();
    }
  }

  it("sends and receives in pass mode", async () => {
    await received();
    const sender = bus.createSender(QUEUE);
    const receiver = bus.createReceiver(QUEUE, { receiveMode: "receiveAndDelete" });
    try {
      await sender.sendMessages({ body: { n: 1 } });
      const messages = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
      expect(messages.map((m) => m.body as unknown)).toEqual([{ n: 1 }]);
    } finally {
      await sender.close();
      await receiver.close();
    }
    const stats = faulty.proxies.serviceBus.stats();
    expect(stats.open).toBeGreaterThanOrEqual(1);
    expect(stats.bytesUp).toBeGreaterThan(0);
    expect(stats.bytesDown).toBeGreaterThan(0);
  });

  it("after a reset the SDK reconnects and a later send succeeds", async () => {
    const sender = bus.createSender(QUEUE);
    try {
      await sender.sendMessages({ body: "before" });
      const accepted = faulty.proxies.serviceBus.stats().accepted;
      expect(faulty.proxies.serviceBus.reset()).toBeGreaterThanOrEqual(1);
      // Once the SDK has seen the reset (a moment on loopback), its next send opens a new connection at once.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const start = Date.now();
      await sender.sendMessages({ body: "after" });
      expect(Date.now() - start).toBeLessThan(1000);
      expect(faulty.proxies.serviceBus.stats().accepted).toBe(accepted + 1);
      expect(await received()).toEqual(["before", "after"]);
    } finally {
      await sender.close();
    }
  });

  it("a send in flight at the reset waits out its operation timeout, then the SDK's retry sends it", async () => {
    // With the SDK's defaults this is 60 s of timeout and 30 s of retry delay: shortened here.
    const client = new ServiceBusClient(faulty.proxied.serviceBusConnectionString, {
      retryOptions: { timeoutInMs: 1000, maxRetries: 1, retryDelayInMs: 50 },
    });
    try {
      const sender = client.createSender(QUEUE);
      await sender.sendMessages({ body: "warm" });
      faulty.proxies.serviceBus.reset();
      const start = Date.now();
      await sender.sendMessages({ body: "in flight" });
      const ms = Date.now() - start;
      expect(ms).toBeGreaterThanOrEqual(900);
      expect(ms).toBeLessThan(3000);
      expect(await received()).toEqual(["warm", "in flight"]);
    } finally {
      await client.close();
    }
  });

  describe("a silent network", () => {
    /** A client that gives an operation one second and no retry. */
    let impatient: ServiceBusClient;
    let sender: ServiceBusSender;
    beforeAll(async () => {
      impatient = new ServiceBusClient(faulty.proxied.serviceBusConnectionString, {
        retryOptions: { timeoutInMs: 1000, maxRetries: 0 },
      });
      sender = impatient.createSender(QUEUE);
      await sender.sendMessages({ body: "warm" });
      await received();
    });
    afterAll(async () => {
      faulty.proxies.serviceBus.clear();
      await impatient?.close();
    });

    it("a send fails on the SDK's operation timeout; after the outage sends work again", async () => {
      faulty.proxies.serviceBus.blackhole();
      const { error, ms } = await failure(sender.sendMessages({ body: "lost?" }));
      expect(error).toMatchObject({ name: "ServiceBusError", code: "ServiceTimeout", retryable: true });
      expect(ms).toBeGreaterThanOrEqual(900);
      expect(ms).toBeLessThan(3000);
      expect(faulty.proxies.serviceBus.stats().blackholedBytes).toBeGreaterThan(0);
      faulty.proxies.serviceBus.clear();
      await sender.sendMessages({ body: "healed" });
      // The held bytes arrive once the network heals, as TCP's retransmissions would deliver them: the send the
      // SDK reported as timed out was delivered after all (a retry by the caller would be a duplicate).
      expect(await received()).toEqual(["lost?", "healed"]);
    });

    it("an outage that ends in resets loses what it held; the next send reconnects", async () => {
      faulty.proxies.serviceBus.blackhole({ end: "reset" });
      const { ms } = await failure(sender.sendMessages({ body: "lost" }));
      expect(ms).toBeLessThan(3000);
      const resets = faulty.proxies.serviceBus.stats().reset;
      faulty.proxies.serviceBus.clear();
      expect(faulty.proxies.serviceBus.stats().reset).toBeGreaterThan(resets);
      await new Promise((resolve) => setTimeout(resolve, 250));
      await sender.sendMessages({ body: "after" });
      expect(await received()).toEqual(["after"]);
    });

    it("refuse: new connections fail at once while open ones carry on", async () => {
      faulty.proxies.serviceBus.refuse();
      const newcomer = new ServiceBusClient(faulty.proxied.serviceBusConnectionString, {
        retryOptions: { timeoutInMs: 1000, maxRetries: 0 },
      });
      try {
        const refused = faulty.proxies.serviceBus.stats().refused;
        await expect(newcomer.createSender(QUEUE).sendMessages({ body: "refused" })).rejects.toThrow();
        expect(faulty.proxies.serviceBus.stats().refused).toBeGreaterThan(refused);
        await sender.sendMessages({ body: "open one" });
      } finally {
        faulty.proxies.serviceBus.clear();
        await newcomer.close();
      }
      expect(await received()).toEqual(["open one"]);
    });
  });
});

describe("the app behind the proxies", () => {
  it("gives the app the proxies' addresses and keeps the emulators' for the test", () => {
    const settings = faulty.appSettings({ EXTRA: "1" });
    expect(settings.ServiceBusConnection).toBe(faulty.proxied.serviceBusConnectionString);
    expect(settings.ServiceBusConnection).toContain(`sb://127.0.0.1:${faulty.proxies.serviceBus.port};`);
    expect(settings.CosmosConnection).toContain(`AccountEndpoint=${faulty.proxies.cosmos.url}/;`);
    expect(settings.EXTRA).toBe("1");
    expect(faulty.direct.serviceBusConnectionString).not.toBe(faulty.proxied.serviceBusConnectionString);
    expect(faulty.direct.cosmosEndpoint).toBe(faulty.stack.emulators.cosmosEndpoint);
  });

  it("an app on the devhost (startE2E with faultProxies) reaches its store and bus through them", async () => {
    const e2e = await startE2E({}, { faultProxies: true });
    try {
      const proxies = e2e.proxies!;
      const order = e2eOrder("proxied");
      expect((await e2e.submit(order)).status).toBe(202);
      await e2e.waitForState(order.orderId, ["Processed"], 30_000);
      expect(proxies.cosmos.stats().forwarded).toBeGreaterThan(0);
      expect(proxies.serviceBus.stats().bytesUp).toBeGreaterThan(0);
    } finally {
      await e2e.stop();
    }
  });
});
