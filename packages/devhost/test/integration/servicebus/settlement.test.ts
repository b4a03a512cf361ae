/**
 * Settling peek-locked messages through the real client: complete, abandon (delivery count, dead-letter
 * at MaxDeliveryCount), explicit dead-letter with reason and description, the `/$DeadLetterQueue`
 * subqueue, defer + receiveDeferredMessages, and peek.
 */
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({
    poison: { MaxDeliveryCount: 3 },
    explicit: {},
    deferral: {},
    browse: {},
    dlqsettle: { MaxDeliveryCount: 1 },
    mixed: {},
  });
});
afterAll(async () => {
  await sb?.stop();
});

async function receiveOne(
  receiver: ServiceBusReceiver,
  maxWaitTimeInMs = 2_000,
): Promise<ServiceBusReceivedMessage> {
  const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs });
  if (!message) throw new Error("no message received");
  return message;
}

describe("settlements in one tick", () => {
  it("reach the broker as given: the completed message is gone, the abandoned one comes back", async () => {
    const sender = sb.client.createSender("mixed");
    await sender.sendMessages([
      { body: "done", messageId: "m-done" },
      { body: "again", messageId: "m-again" },
    ]);
    const receiver = sb.client.createReceiver("mixed");
    try {
      const received: ServiceBusReceivedMessage[] = [];
      while (received.length < 2) received.push(await receiveOne(receiver));
      const done = received.find((m) => m.messageId === "m-done")!;
      const again = received.find((m) => m.messageId === "m-again")!;
      // Both settled before either is answered: rhea writes them in one pass.
      await Promise.all([receiver.completeMessage(done), receiver.abandonMessage(again)]);
      const redelivered = await receiveOne(receiver);
      expect(redelivered.messageId).toBe("m-again");
      expect(redelivered.deliveryCount).toBe(1);
      await receiver.completeMessage(redelivered);
      expect(sb.emulator.queueCounts("mixed").active).toBe(0);
    } finally {
      await receiver.close();
      await sender.close();
    }
  });
});

describe("abandon and MaxDeliveryCount", () => {
  it("counts each abandon and dead-letters at MaxDeliveryCount with reason MaxDeliveryCountExceeded", async () => {
    const sender = sb.client.createSender("poison");
    await sender.sendMessages({ body: "poison", messageId: "p-1" });
    const receiver = sb.client.createReceiver("poison");
    const counts: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const message = await receiveOne(receiver);
      counts.push(message.deliveryCount ?? -1);
      await receiver.abandonMessage(message, { lastAttempt: attempt });
    }
    expect(counts).toEqual([0, 1, 2]);
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 300 })).toHaveLength(0);
    expect(sb.emulator.queueCounts("poison")).toMatchObject({ active: 0, deadLettered: 1 });

    const dlq = sb.client.createReceiver("poison", { subQueueType: "deadLetter" });
    const dead = await receiveOne(dlq);
    expect(dead.body).toBe("poison");
    expect(dead.messageId).toBe("p-1");
    expect(dead.deadLetterReason).toBe("MaxDeliveryCountExceeded");
    expect(dead.deadLetterErrorDescription).toMatch(/3 delivery attempts/);
    // Service Bus sets DeadLetterSource only on messages auto-forwarded out of a dead-letter queue.
    expect(dead.deadLetterSource).toBeUndefined();
    expect(dead.applicationProperties?.lastAttempt).toBe(2); // abandon's propertiesToModify are kept
    await dlq.completeMessage(dead);
    expect(sb.emulator.queueCounts("poison").deadLettered).toBe(0);
    await Promise.all([sender.close(), receiver.close(), dlq.close()]);
  });
});

describe("dead-letter", () => {
  it("moves a message to the DLQ with reason, description and extra properties", async () => {
    const sender = sb.client.createSender("explicit");
    await sender.sendMessages({
      body: { name: "Creamy Chicken Pasta" },
      subject: "Recipe",
      applicationProperties: { a: 1 },
    });
    const receiver = sb.client.createReceiver("explicit");
    const message = await receiveOne(receiver);
    await receiver.deadLetterMessage(message, {
      deadLetterReason: "Incorrect Recipe type",
      deadLetterErrorDescription: "Recipe type does not match preferences.",
      checkedBy: "test",
    });
    expect(sb.emulator.queueCounts("explicit")).toMatchObject({ active: 0, deadLettered: 1 });

    // The subqueue is addressable by path as well as by subQueueType.
    const dlq = sb.client.createReceiver("explicit/$DeadLetterQueue");
    const [peeked] = await dlq.peekMessages(1);
    expect(peeked?.deadLetterReason).toBe("Incorrect Recipe type");
    const dead = await receiveOne(dlq);
    expect(dead).toMatchObject({
      body: { name: "Creamy Chicken Pasta" },
      subject: "Recipe",
      deadLetterReason: "Incorrect Recipe type",
      deadLetterErrorDescription: "Recipe type does not match preferences.",
      applicationProperties: { a: 1, checkedBy: "test" },
    });
    expect(dead.deadLetterSource).toBeUndefined();
    await dlq.completeMessage(dead);
    await Promise.all([sender.close(), receiver.close(), dlq.close()]);
  });

  it("abandoning in the DLQ keeps the message there (no dead-letter queue below it)", async () => {
    const sender = sb.client.createSender("dlqsettle");
    await sender.sendMessages({ body: "once" });
    const receiver = sb.client.createReceiver("dlqsettle");
    await receiver.abandonMessage(await receiveOne(receiver)); // MaxDeliveryCount 1: straight to the DLQ
    const dlq = sb.client.createReceiver("dlqsettle", { subQueueType: "deadLetter" });
    for (let i = 0; i < 3; i++) await dlq.abandonMessage(await receiveOne(dlq));
    const again = await receiveOne(dlq);
    expect(again.body).toBe("once");
    expect(again.deadLetterReason).toBe("MaxDeliveryCountExceeded");
    await dlq.completeMessage(again);
    expect(sb.emulator.queueCounts("dlqsettle")).toMatchObject({ active: 0, deadLettered: 0 });
    await Promise.all([sender.close(), receiver.close(), dlq.close()]);
  });

  it("refuses senders to a dead-letter queue", async () => {
    const sender = sb.client.createSender("explicit/$DeadLetterQueue");
    await expect(sender.sendMessages({ body: 1 })).rejects.toThrow(/dead-letter queue/);
    await sender.close();
  });
});

describe("defer", () => {
  it("sets a message aside until receiveDeferredMessages asks for it by sequence number", async () => {
    const sender = sb.client.createSender("deferral");
    await sender.sendMessages([{ body: { step: 2 } }, { body: { step: 1 } }]);
    const receiver = sb.client.createReceiver("deferral");
    const [second, first] = await receiver.receiveMessages(2, { maxWaitTimeInMs: 2_000 });
    await receiver.deferMessage(second!, { deferredBy: "test" });
    await receiver.completeMessage(first!);

    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 300 })).toHaveLength(0);
    expect(sb.emulator.queueCounts("deferral")).toMatchObject({ active: 0, deferred: 1 });
    const [peeked] = await receiver.peekMessages(10);
    expect(peeked?.state).toBe("deferred");

    const [deferred] = await receiver.receiveDeferredMessages(second!.sequenceNumber!);
    expect(deferred?.body).toEqual({ step: 2 });
    expect(deferred?.applicationProperties?.deferredBy).toBe("test");
    expect(deferred?.lockToken).toBeDefined();
    // Settled through $management (update-disposition): a deferred message has no link delivery.
    await receiver.completeMessage(deferred!);
    expect(sb.emulator.queueCounts("deferral")).toMatchObject({ active: 0, deferred: 0 });
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("abandons and dead-letters deferred messages through $management too", async () => {
    const sender = sb.client.createSender("deferral");
    await sender.sendMessages({ body: "later" });
    const receiver = sb.client.createReceiver("deferral");
    const message = await receiveOne(receiver);
    await receiver.deferMessage(message);

    const [once] = await receiver.receiveDeferredMessages(message.sequenceNumber!);
    await receiver.abandonMessage(once!);
    expect(sb.emulator.queueCounts("deferral").deferred).toBe(1); // still deferred after an abandon
    const [twice] = await receiver.receiveDeferredMessages(message.sequenceNumber!);
    expect(twice?.deliveryCount).toBe(1);
    await receiver.deadLetterMessage(twice!, {
      deadLetterReason: "gave up",
      deadLetterErrorDescription: "twice",
    });
    expect(sb.emulator.queueCounts("deferral")).toMatchObject({ deferred: 0, deadLettered: 1 });

    await expect(receiver.receiveDeferredMessages(message.sequenceNumber!)).rejects.toMatchObject({
      code: "MessageNotFound",
    });
    const dlq = sb.client.createReceiver("deferral", {
      subQueueType: "deadLetter",
      receiveMode: "receiveAndDelete",
    });
    const dead = await receiveOne(dlq);
    expect(dead.deadLetterReason).toBe("gave up");
    await Promise.all([sender.close(), receiver.close(), dlq.close()]);
  });
});

describe("peek", () => {
  it("browses every state without locking, from a sequence number on", async () => {
    const sender = sb.client.createSender("browse");
    const receiver = sb.client.createReceiver("browse");
    expect(await receiver.peekMessages(5)).toEqual([]); // empty: statusCode 204
    await sender.sendMessages([{ body: "p1" }, { body: "p2" }, { body: "p3" }]);
    await sender.scheduleMessages({ body: "p4" }, new Date(Date.now() + 60_000));

    const all = await receiver.peekMessages(10);
    expect(all.map((m) => m.body)).toEqual(["p1", "p2", "p3", "p4"]);
    expect(all.map((m) => m.state)).toEqual(["active", "active", "active", "scheduled"]);
    expect(all.every((m) => m.lockToken === undefined)).toBe(true);
    expect(sb.emulator.queueCounts("browse")).toMatchObject({ active: 3, locked: 0, scheduled: 1 });

    const fromSecond = await receiver.peekMessages(2, { fromSequenceNumber: all[1]!.sequenceNumber! });
    expect(fromSecond.map((m) => m.body)).toEqual(["p2", "p3"]);

    // Peeking does not consume: the messages are still there to receive.
    const received = await receiver.receiveMessages(3, { maxWaitTimeInMs: 2_000 });
    expect(received.map((m) => m.body)).toEqual(["p1", "p2", "p3"]);
    for (const m of received) await receiver.completeMessage(m);
    await sender.cancelScheduledMessages(all[3]!.sequenceNumber!);
    await Promise.all([sender.close(), receiver.close()]);
  });
});
