/**
 * Topic triggers and batched triggers as an app meets them: the servicebus-topics-app sends to a topic with
 * @azure/service-bus, and its topic triggers each get exactly what their subscription's rule selects (Microsoft
 * Learn, "Topic filters and actions" and "Subscription Rule SQL Filter Syntax"); its batched triggers
 * (cardinality "many") get arrays of bodies with the host's array metadata.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBusEmulator } from "../../../src/emulators/servicebus";
import { APPS_DIR, startTestDevHost, type TestDevHost } from "../../support/devhost";
import { DOTNET_DATE_TIME, DOTNET_DATE_TIME_OFFSET } from "../../support/servicebus";
import { eventually } from "../../support/servicebus";
import { ServiceBusClient } from "@azure/service-bus";

interface Seen {
  message: { id: string };
  metadata: Record<string, unknown>;
}
interface Batch {
  messages: { id: string; fail?: boolean }[];
  metadata: Record<string, unknown[]>;
}
interface SeenAll {
  bigBlue: Seen[];
  euJson: Seen[];
  auditBatches: Batch[];
  workBatches: Batch[];
}

describe("devhost topic and batched Service Bus triggers", () => {
  let emulator: ServiceBusEmulator;
  let host: TestDevHost;

  beforeAll(async () => {
    emulator = new ServiceBusEmulator({
      port: 0,
      config: path.join(APPS_DIR, "servicebus-topics-app", "servicebus-emulator.config.json"),
    });
    await emulator.start();
    host = await startTestDevHost("servicebus-topics-app", {
      settings: { ServiceBusConnection: emulator.connectionString, ORDERS_TOPIC: "orders" },
    });
  });

  afterAll(async () => {
    await host?.stop();
    await emulator?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  const seen = async (): Promise<SeenAll> => (await (await fetch(`${host.url}/api/seen`)).json()) as SeenAll;

  it("lists the topic triggers with their subscriptions, and the batched ones as such", () => {
    const describe = (name: string) => host.functions.find((f) => f.name === name)?.description;
    expect(describe("bigBlue")).toBe("serviceBusTrigger (orders/Subscriptions/big-blue)");
    expect(describe("euJson")).toBe("serviceBusTrigger (orders/Subscriptions/eu-json)");
    expect(describe("auditBatch")).toBe("serviceBusTrigger (orders/Subscriptions/audit, batches)");
    expect(describe("workBatch")).toBe("serviceBusTrigger (batch-work, batches)");
  });

  it("gives each topic trigger exactly the messages its subscription's rule selects, with the action's property", async () => {
    const orders = [
      { body: { id: "big-blue" }, messageId: "o1", applicationProperties: { color: "blue", quantity: 12 } },
      { body: { id: "small-blue" }, messageId: "o2", applicationProperties: { color: "blue", quantity: 2 } },
      { body: { id: "big-red" }, messageId: "o3", applicationProperties: { color: "red", quantity: 50 } },
      {
        body: { id: "eu-json" },
        messageId: "o4",
        contentType: "application/json",
        applicationProperties: { region: "eu" },
      },
      {
        body: { id: "us-json" },
        messageId: "o5",
        contentType: "application/json",
        applicationProperties: { region: "us" },
      },
      {
        body: { id: "eu-text" },
        messageId: "o6",
        contentType: "text/plain",
        applicationProperties: { region: "eu" },
      },
    ];
    const response = await fetch(`${host.url}/api/orders`, { method: "POST", body: JSON.stringify(orders) });
    expect(response.status).toBe(202);

    // The audit subscription (no rules: the $Default true filter) gets all six, in batches of at most 5.
    const all = await eventually(
      async () => {
        const now = await seen();
        return now.auditBatches.flatMap((b) => b.messages).length >= 6 && now;
      },
      { timeoutMs: 15_000, what: "the audit batches" },
    );
    // The SQL filter (color = 'blue' AND quantity >= 10) selects o1 only; its action sets priority.
    expect(all.bigBlue.map((s) => s.message.id)).toEqual(["big-blue"]);
    expect(all.bigBlue[0]?.metadata).toMatchObject({
      messageId: "o1",
      deliveryCount: 1,
      // @azure/functions camel-cases the keys of application properties; RuleName marks a copy made by an
      // action (Learn, "Topic filters and actions").
      applicationProperties: { color: "blue", quantity: 12, priority: "high", ruleName: "big-blue-orders" },
    });
    // The correlation filter (ContentType application/json and region eu) selects o4 only.
    expect(all.euJson.map((s) => s.message.id)).toEqual(["eu-json"]);
    expect(all.euJson[0]?.metadata).toMatchObject({ messageId: "o4", contentType: "application/json" });

    expect(all.auditBatches.every((b) => b.messages.length <= 5)).toBe(true);
    expect(all.auditBatches.flatMap((b) => b.messages.map((m) => m.id)).sort()).toEqual(
      ["big-blue", "big-red", "eu-json", "eu-text", "small-blue", "us-json"].sort(),
    );
    // Nothing is left behind on any subscription: every invocation succeeded and completed its messages.
    for (const subscription of emulator.subscriptionPaths("orders")) {
      expect(emulator.queueCounts(subscription)).toMatchObject({ active: 0, deadLettered: 0 });
    }
  });

  it("hands a batched trigger arrays of bodies and the host's *Array metadata, one entry per message", async () => {
    const client = new ServiceBusClient(emulator.connectionString);
    const sender = client.createSender("batch-work");
    await sender.sendMessages(
      ["b1", "b2", "b3"].map((id, i) => ({
        body: { id },
        messageId: `m-${id}`,
        correlationId: `c-${i}`,
        subject: "work",
        applicationProperties: { Index: i },
      })),
    );
    await sender.close();
    await client.close();

    const batches = await eventually(
      async () => {
        const now = (await seen()).workBatches;
        return now.flatMap((b) => b.messages).length >= 3 && now;
      },
      { timeoutMs: 15_000, what: "the work batches" },
    );
    const ids = batches.flatMap((b) => b.messages.map((m) => m.id));
    expect(ids).toEqual(["b1", "b2", "b3"]);
    const batch = batches[0]!;
    const n = batch.messages.length;
    const metadata = batch.metadata;
    // Key names and shapes: Microsoft.Azure.WebJobs.Extensions.ServiceBus, ServiceBusTriggerBindingStrategy
    // (a message array's binding data), camel-cased by @azure/functions.
    expect(metadata.messageIdArray).toEqual(["m-b1", "m-b2", "m-b3"].slice(0, n));
    expect(metadata.deliveryCountArray).toEqual(Array(n).fill(1));
    expect(metadata.correlationIdArray).toEqual(["c-0", "c-1", "c-2"].slice(0, n));
    expect(metadata.subjectArray).toEqual(Array(n).fill("work"));
    expect(metadata.labelArray).toEqual(Array(n).fill("work"));
    expect(metadata.applicationPropertiesArray).toEqual(
      [{ index: 0 }, { index: 1 }, { index: 2 }].slice(0, n),
    );
    expect(metadata.userPropertiesArray).toEqual(metadata.applicationPropertiesArray);
    expect(metadata.sequenceNumberArray).toHaveLength(n);
    // DateTime[] with no zone and DateTimeOffset[] at +00:00, as the host's Newtonsoft.Json writes them.
    expect(metadata.enqueuedTimeUtcArray?.every((t) => DOTNET_DATE_TIME.test(String(t)))).toBe(true);
    expect(metadata.enqueuedTimeArray?.every((t) => DOTNET_DATE_TIME_OFFSET.test(String(t)))).toBe(true);
    expect(metadata.expiresAtUtcArray).toHaveLength(n);
    expect(metadata.lockTokenArray).toHaveLength(n);
    expect(emulator.queueCounts("batch-work")).toMatchObject({ active: 0, deadLettered: 0 });
  });

  it("abandons a whole batch when the function fails: redelivered, then dead-lettered at MaxDeliveryCount", async () => {
    const client = new ServiceBusClient(emulator.connectionString);
    const sender = client.createSender("batch-work");
    await sender.sendMessages([
      { body: { id: "p1", fail: true }, messageId: "m-p1" },
      { body: { id: "p2" }, messageId: "m-p2" },
    ]);
    await sender.close();
    try {
      // MaxDeliveryCount 2: two failed invocations of the batch, then both messages are dead-lettered.
      await eventually(() => emulator.queueCounts("batch-work").deadLettered === 2, {
        timeoutMs: 15_000,
        what: "both messages dead-lettered",
      });
      const poisoned = (await seen()).workBatches.filter((b) => b.messages.some((m) => m.id === "p1"));
      expect(poisoned.map((b) => b.metadata.deliveryCountArray)).toEqual([
        [1, 1],
        [2, 2],
      ]);
      const dlq = client.createReceiver("batch-work", {
        subQueueType: "deadLetter",
        receiveMode: "receiveAndDelete",
      });
      const dead = await dlq.receiveMessages(2, { maxWaitTimeInMs: 2_000 });
      await dlq.close();
      expect(dead.map((m) => [m.messageId, m.deadLetterReason])).toEqual([
        ["m-p1", "MaxDeliveryCountExceeded"],
        ["m-p2", "MaxDeliveryCountExceeded"],
      ]);
    } finally {
      await client.close();
    }
  });
});

describe("devhost topic and batched triggers whose entities do not exist", () => {
  let emulator: ServiceBusEmulator;
  let host: TestDevHost;

  beforeAll(async () => {
    emulator = new ServiceBusEmulator({ port: 0 }); // no queues, no topics
    await emulator.start();
    host = await startTestDevHost("servicebus-topics-app", {
      settings: { ServiceBusConnection: emulator.connectionString, ORDERS_TOPIC: "orders" },
    });
  });

  afterAll(async () => {
    await host?.stop();
    await emulator?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  it("warns naming the function and subscription, and backs off, batched or not", async () => {
    const warnings = (prefix: string): string[] => host.lines().filter((line) => line.startsWith(prefix));
    const batched = "Service Bus trigger auditBatch (orders/Subscriptions/audit)";
    const single = "Service Bus trigger bigBlue (orders/Subscriptions/big-blue)";
    await eventually(() => warnings(batched).length >= 2 && warnings(single).length >= 2, {
      timeoutMs: 10_000,
      what: "a second warning of each",
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const prefix of [batched, single]) {
      expect(warnings(prefix).length).toBeLessThanOrEqual(3);
      expect(warnings(prefix)[0]).toMatch(/: MessagingEntityNotFound: .*; receiving again in 1 s$/);
      expect(warnings(prefix)[1]).toMatch(/receiving again in 2 s$/);
    }
  });
});
