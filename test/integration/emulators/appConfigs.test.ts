/**
 * The app's emulator configs, which the devhost's emulators serve locally and infra/modules/*.bicep deploys: the
 * queues (official Service Bus emulator Config.json format) served to the real client, and the Cosmos DB
 * database and containers created with the indexes the app's queries need. The shipped settings name both files.
 */
import { ServiceBusClient } from "@azure/service-bus";
import {
  emulatorClient,
  loadEmulatorConfig,
  queueSettingsOf,
  ServiceBusEmulator,
  startCosmosEmulator,
  type CosmosEmulator,
} from "devhost/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_NAMES, agentRequestQueue } from "../../../src/domain";
import { emulatorConfigFiles, sampleSettings } from "../../../tools/repository";

const configs = emulatorConfigFiles();
let emulator: ServiceBusEmulator;
let client: ServiceBusClient;
const logged: string[] = [];
let cosmos: CosmosEmulator;

beforeAll(async () => {
  emulator = new ServiceBusEmulator({
    port: 0,
    config: configs.serviceBus,
    log: (line) => logged.push(line),
  });
  await emulator.start();
  client = new ServiceBusClient(emulator.connectionString);
  cosmos = await startCosmosEmulator({ port: 0, config: configs.cosmos });
});
afterAll(async () => {
  await client?.close();
  await emulator?.stop();
  await cosmos?.stop();
});

describe("the settings that name the configs", () => {
  it("are set in local.settings.sample.json, relative to the app root", () => {
    expect(sampleSettings()).toMatchObject({
      DEVHOST_SERVICEBUS_CONFIG: "infra/servicebus-emulator.config.json",
      DEVHOST_COSMOS_CONFIG: "infra/cosmos-emulator.config.json",
    });
  });
});

describe("the app's queue config (infra/servicebus-emulator.config.json)", () => {
  it("declares the app's queues, with duplicate detection on agent requests and refusals and not on orders", () => {
    const settings = queueSettingsOf(loadEmulatorConfig(configs.serviceBus));
    const byName = new Map(settings.map((s) => [s.name, s]));
    // One request queue per declared service (src/domain/process.ts), beside the app's own queues.
    const requestQueues = AGENT_NAMES.map(agentRequestQueue);
    expect([...byName.keys()].sort()).toEqual(
      [
        "orders",
        ...requestQueues,
        "agent-replies",
        "deadlines",
        "alerts",
        "rejected-messages",
        "status-demo",
      ].sort(),
    );
    for (const name of [...requestQueues, "deadlines", "rejected-messages"]) {
      expect(byName.get(name)?.requiresDuplicateDetection).toBe(true);
    }
    // Every submission reaches the app, which tells a resend from a conflicting version by the fingerprint.
    expect(byName.get("orders")?.requiresDuplicateDetection).toBe(false);
    expect(emulator.queueNames().sort()).toEqual([...byName.keys()].sort());
    expect(logged[0]).toMatch(/^listening on 127\.0\.0\.1:\d+ \(queues: orders, /);
  });

  it("serves the orders queue to the real client, delivering two versions sent under one MessageId", async () => {
    const sender = client.createSender("orders");
    const order = { orderId: "ORD-1001", customerId: "C-42" };
    const changed = { ...order, customerId: "C-43" };
    await sender.sendMessages({ body: order, messageId: order.orderId, replyTo: "status-demo" });
    await sender.sendMessages({ body: changed, messageId: order.orderId, replyTo: "status-demo" });
    const receiver = client.createReceiver("orders");
    const received = await receiver.receiveMessages(5, { maxWaitTimeInMs: 1_000 });
    expect(received.map((m) => m.body)).toEqual([order, changed]);
    await receiver.completeMessage(received[1]!);
    expect(received[0]!.lockedUntilUtc!.getTime() - received[0]!.enqueuedTimeUtc!.getTime()).toBeGreaterThan(
      59_000,
    );
    await receiver.completeMessage(received[0]!);

    const status = client.createSender("status-demo");
    await status.sendMessages({ body: { orderId: "ORD-1001", status: "accepted" } });
    expect(emulator.queueCounts("status-demo").active).toBe(1);
    await Promise.all([sender.close(), receiver.close(), status.close()]);
  });
});

describe("the app's Cosmos DB config (infra/cosmos-emulator.config.json)", () => {
  it("creates the COSMOS_DATABASE database with orders, state and leases, partitioned on /orderId", async () => {
    const database = sampleSettings().COSMOS_DATABASE!;
    expect(cosmos.databases).toEqual([database]);
    const client = emulatorClient(cosmos.endpoint);
    try {
      const { resources } = await client.database(database).containers.readAll().fetchAll();
      expect(resources.map((c) => c.id).sort()).toEqual(["leases", "orders", "rejected", "state"]);
      for (const c of resources) expect(c.partitionKey?.paths).toEqual(["/orderId"]);
      const state = resources.find((c) => c.id === "state");
      const composites = (state?.indexingPolicy?.compositeIndexes ?? []).map((pair) =>
        pair.map((p) => `${p.path} ${p.order}`).join(", "),
      );
      // The starter's and the Supervisor's claims, and the operator listing with and without a state filter.
      expect(composites).toEqual([
        "/processState ascending, /createdAt ascending",
        "/processState ascending, /completeBy ascending",
        "/updatedAt descending, /id descending",
        "/processState ascending, /updatedAt descending, /id descending",
      ]);
    } finally {
      client.dispose();
    }
  });
});
