import fs from "node:fs";
import type { ServiceBusReceivedMessage } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";
import {
  DOTNET_DATE_TIME,
  DOTNET_DATE_TIME_OFFSET,
  eventually,
  startServiceBus,
  type ServiceBusFixture,
} from "../../support/servicebus";

interface Seen {
  message: { id: string; fail?: boolean };
  metadata: Record<string, unknown>;
}

describe("devhost Service Bus trigger", () => {
  let bus: ServiceBusFixture;
  let host: TestDevHost;

  beforeAll(async () => {
    bus = await startServiceBus({
      work: { LockDuration: "PT30S", MaxDeliveryCount: 3 },
      fanout: { LockDuration: "PT30S", MaxDeliveryCount: 3 },
      results: { LockDuration: "PT30S", MaxDeliveryCount: 3 },
    });
    host = await startTestDevHost("servicebus-app", {
      settings: {
        ServiceBusConnection: bus.emulator.connectionString,
        WORK_QUEUE: "work",
        RESULTS_QUEUE: "results",
        FANOUT_QUEUE: "fanout",
      },
    });
  });

  afterAll(async () => {
    await host?.stop();
    await bus?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  const seen = async (): Promise<{ seen: Seen[]; maxRunning: number }> =>
    (await (await fetch(`${host.url}/api/seen`)).json()) as { seen: Seen[]; maxRunning: number };

  async function receiveResults(count: number): Promise<ServiceBusReceivedMessage[]> {
    const receiver = bus.client.createReceiver("results", { receiveMode: "receiveAndDelete" });
    const got: ServiceBusReceivedMessage[] = [];
    try {
      await eventually(
        async () => {
          got.push(...(await receiver.receiveMessages(count - got.length, { maxWaitTimeInMs: 200 })));
          return got.length >= count;
        },
        { timeoutMs: 10_000, what: `${count} result message(s)` },
      );
    } finally {
      await receiver.close();
    }
    return got;
  }

  it("lists the trigger with its queue (%NAME% resolved)", () => {
    expect(host.functions.find((f) => f.name === "work")?.description).toBe("serviceBusTrigger (work)");
  });

  it("delivers the parsed body with triggerMetadata, completes on success and sends the output binding", async () => {
    const sender = bus.client.createSender("work");
    await sender.sendMessages({
      body: { id: "ok-1" },
      messageId: "m-ok-1",
      correlationId: "corr-1",
      applicationProperties: { Tenant: "t1", attempt: 1 },
    });
    await sender.close();

    const [result] = await receiveResults(1);
    expect(result?.body).toEqual({ id: "ok-1", done: true });

    const entry = (await seen()).seen.find((s) => s.message.id === "ok-1");
    expect(entry?.message).toEqual({ id: "ok-1" });
    expect(entry?.metadata).toMatchObject({
      messageId: "m-ok-1",
      deliveryCount: 1,
      correlationId: "corr-1",
      // @azure/functions camel-cases nested keys of triggerMetadata, in Azure as here.
      applicationProperties: { tenant: "t1", attempt: 1 },
    });
    // Typed as the host types the extension's binding data: numbers and times as JSON (a DateTime with no zone, a
    // DateTimeOffset at +00:00, as Newtonsoft.Json writes them), and only the keys the extension adds.
    expect(typeof entry?.metadata.sequenceNumber).toBe("number");
    expect(String(entry?.metadata.enqueuedTimeUtc)).toMatch(DOTNET_DATE_TIME);
    expect(String(entry?.metadata.enqueuedTime)).toMatch(DOTNET_DATE_TIME_OFFSET);
    expect(entry?.metadata).not.toHaveProperty("lockedUntilUtc");

    // Completed: nothing left to receive on the queue.
    const receiver = bus.client.createReceiver("work");
    expect(await receiver.peekMessages(10)).toHaveLength(0);
    await receiver.close();
  });

  it("pauses a trigger, as disabling the function does: its messages wait in the queue until it resumes", async () => {
    await host.pauseTrigger("work");
    const sender = bus.client.createSender("work");
    await sender.sendMessages({ body: { id: "paused-1" }, messageId: "m-paused-1" });
    await sender.close();
    // Nobody receives it while paused: it is still there, never delivered.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const peeker = bus.client.createReceiver("work");
    const waiting = await peeker.peekMessages(10);
    await peeker.close();
    expect(waiting.map((m) => [m.messageId, m.deliveryCount])).toEqual([["m-paused-1", 0]]);
    expect((await seen()).seen.some((s) => s.message.id === "paused-1")).toBe(false);

    host.resumeTrigger("work");
    const [result] = await receiveResults(1);
    expect(result?.body).toEqual({ id: "paused-1", done: true });
    await expect(host.pauseTrigger("no-such-function")).rejects.toThrow(
      'no Service Bus-triggered function named "no-such-function"',
    );
  });

  it("abandons on a thrown error: redelivered with deliveryCount + 1, dead-lettered at MaxDeliveryCount", async () => {
    const sender = bus.client.createSender("work");
    await sender.sendMessages({ body: { id: "poison", fail: true }, messageId: "m-poison" });
    await sender.close();

    const dlq = bus.client.createReceiver("work", { subQueueType: "deadLetter" });
    const [dead] = await eventually(
      async () => {
        const messages = await dlq.receiveMessages(1, { maxWaitTimeInMs: 200 });
        return messages.length > 0 ? messages : undefined;
      },
      { timeoutMs: 10_000, what: "the poison message in the dead-letter queue" },
    );
    await dlq.completeMessage(dead!);
    await dlq.close();
    expect(dead?.messageId).toBe("m-poison");
    expect(dead?.deadLetterReason).toBe("MaxDeliveryCountExceeded");

    const attempts = (await seen()).seen
      .filter((s) => s.message.id === "poison")
      .map((s) => s.metadata.deliveryCount);
    expect(attempts).toEqual([1, 2, 3]);
    expect(host.lines()).toContainEqual(expect.stringMatching(/^Executed 'Functions\.work' \(Failed, Id=/));
  });

  it("runs at most maxConcurrentCalls (host.json: 2) invocations at a time", async () => {
    const sender = bus.client.createSender("work");
    await sender.sendMessages(
      Array.from({ length: 6 }, (_, i) => ({
        body: { id: `slow-${i}`, holdMs: 150 },
        messageId: `m-slow-${i}`,
      })),
    );
    await sender.close();
    await receiveResults(6);
    const report = await seen();
    expect(report.seen.filter((s) => s.message.id.startsWith("slow-"))).toHaveLength(6);
    expect(report.maxRunning).toBe(2);
  });

  it("sends one message per element of an array returned through a serviceBus return binding", async () => {
    const sender = bus.client.createSender("fanout");
    await sender.sendMessages({ body: { parts: ["a", "b", "c"] } });
    await sender.close();
    const results = await receiveResults(3);
    expect(results.map((m) => m.body).sort((x, y) => String(x.part).localeCompare(String(y.part)))).toEqual([
      { part: "a" },
      { part: "b" },
      { part: "c" },
    ]);
  });

  // Last: it stops the host.
  it("lets a running invocation finish and complete its message when the host stops", async () => {
    const sender = bus.client.createSender("work");
    await sender.sendMessages({ body: { id: "in-flight", holdMs: 500 }, messageId: "m-in-flight" });
    await sender.close();
    await eventually(() => host.lines().some((line) => line.includes('work got {"id":"in-flight"')), {
      timeoutMs: 10_000,
      what: "the in-flight invocation to start",
    });
    await host.stop();

    expect(host.lines()).toContainEqual(expect.stringMatching(/^Executed 'Functions\.work' \(Succeeded/));
    const [result] = await receiveResults(1);
    expect(result?.body).toEqual({ id: "in-flight", done: true });
    const receiver = bus.client.createReceiver("work");
    expect(await receiver.peekMessages(10)).toHaveLength(0);
    await receiver.close();
  });
});

describe("devhost Service Bus trigger on a queue the namespace does not have", () => {
  let bus: ServiceBusFixture;
  let host: TestDevHost;

  beforeAll(async () => {
    bus = await startServiceBus({ results: { LockDuration: "PT30S", MaxDeliveryCount: 3 } });
    host = await startTestDevHost("servicebus-app", {
      settings: {
        ServiceBusConnection: bus.emulator.connectionString,
        WORK_QUEUE: "no-such-queue",
        RESULTS_QUEUE: "results",
        FANOUT_QUEUE: "also-missing",
      },
    });
  });

  afterAll(async () => {
    await host?.stop();
    await bus?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  it("warns naming the function and queue, and backs off instead of retrying many times a second", async () => {
    const warnings = (): string[] =>
      host.lines().filter((line) => line.startsWith("Service Bus trigger work (no-such-queue)"));
    await eventually(() => warnings().length >= 2, { timeoutMs: 10_000, what: "a second warning" });
    // 1 s then 2 s: by now at most three attempts, each one warning that says when it tries again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(warnings().length).toBeLessThanOrEqual(3);
    expect(warnings()[0]).toMatch(
      /^Service Bus trigger work \(no-such-queue\): MessagingEntityNotFound: .*; receiving again in 1 s$/,
    );
    expect(warnings()[1]).toMatch(/receiving again in 2 s$/);
    // The rest of the app still runs.
    expect((await fetch(`${host.url}/api/seen`)).status).toBe(200);
  });
});
