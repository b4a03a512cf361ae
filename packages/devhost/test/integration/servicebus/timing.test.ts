/**
 * Time-driven behaviour through the real client: scheduled messages and their cancellation, message
 * TTL (dropped, or dead-lettered when the queue says so) and duplicate detection within its window.
 */
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sleep, startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({
    scheduled: {},
    "ttl-drop": { DefaultMessageTimeToLive: "PT0.4S", DeadLetteringOnMessageExpiration: false },
    "ttl-dlq": { DefaultMessageTimeToLive: "PT0.4S", DeadLetteringOnMessageExpiration: true },
    "ttl-message": { DefaultMessageTimeToLive: "P1D", DeadLetteringOnMessageExpiration: true },
    dedup: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
    "dedup-short": { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT0.3S" },
    nodedup: { RequiresDuplicateDetection: false },
  });
});
afterAll(async () => {
  await sb?.stop();
});

async function receiveAll(
  receiver: ServiceBusReceiver,
  maxWaitTimeInMs = 300,
): Promise<ServiceBusReceivedMessage[]> {
  const all: ServiceBusReceivedMessage[] = [];
  for (;;) {
    const got = await receiver.receiveMessages(10, { maxWaitTimeInMs });
    if (got.length === 0) return all;
    all.push(...got);
  }
}

describe("scheduled messages", () => {
  it("holds scheduleMessages and scheduledEnqueueTimeUtc sends as scheduled, and cancels them on request", async () => {
    const sender = sb.client.createSender("scheduled");
    const receiver = sb.client.createReceiver("scheduled");
    const at = new Date(Date.now() + 60_000); // far enough that no load on the machine makes it due
    const [kept, cancelled] = await sender.scheduleMessages([{ body: "s1" }, { body: "s2" }], at);
    await sender.sendMessages({ body: "s3", scheduledEnqueueTimeUtc: at });
    expect(kept!.toNumber()).toBeLessThan(cancelled!.toNumber());
    await sender.cancelScheduledMessages(cancelled!);
    expect(sb.emulator.queueCounts("scheduled")).toMatchObject({ active: 0, scheduled: 2 });

    const peeked = await receiver.peekMessages(10);
    expect(peeked.map((m) => [m.body, m.state])).toEqual([
      ["s1", "scheduled"],
      ["s3", "scheduled"],
    ]);
    expect(peeked[0]!.sequenceNumber!.toNumber()).toBe(kept!.toNumber());
    expect(peeked[0]!.scheduledEnqueueTimeUtc?.getTime()).toBe(at.getTime());
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 })).toHaveLength(0);

    await sender.cancelScheduledMessages(peeked.map((m) => m.sequenceNumber!));
    expect(sb.emulator.queueCounts("scheduled")).toMatchObject({ active: 0, scheduled: 0 });
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("enqueues scheduled messages at their time, never before", async () => {
    const sender = sb.client.createSender("scheduled");
    const receiver = sb.client.createReceiver("scheduled", { receiveMode: "receiveAndDelete" });
    const at = new Date(Date.now() + 500);
    await sender.scheduleMessages([{ body: "s4" }], at);
    await sender.sendMessages({ body: "s5", scheduledEnqueueTimeUtc: at });
    const all: { body: unknown; receivedAt: number; enqueuedAt: number }[] = [];
    while (all.length < 2) {
      const got = await receiver.receiveMessages(2 - all.length, { maxWaitTimeInMs: 5_000 });
      if (got.length === 0) break;
      const receivedAt = Date.now();
      all.push(...got.map((m) => ({ body: m.body, receivedAt, enqueuedAt: m.enqueuedTimeUtc!.getTime() })));
    }
    expect(all.map((m) => m.body)).toEqual(["s4", "s5"]); // due together: delivered in sequence order
    for (const m of all) {
      expect(m.receivedAt).toBeGreaterThanOrEqual(at.getTime());
      expect(m.enqueuedAt).toBeGreaterThanOrEqual(at.getTime()); // the enqueued time is the scheduled time
    }
    expect(sb.emulator.queueCounts("scheduled")).toMatchObject({ active: 0, scheduled: 0 });
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("enqueues a message scheduled in the past at once", async () => {
    const sender = sb.client.createSender("scheduled");
    await sender.scheduleMessages({ body: "past" }, new Date(Date.now() - 60_000));
    const receiver = sb.client.createReceiver("scheduled", { receiveMode: "receiveAndDelete" });
    const [m] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(m?.body).toBe("past");
    await Promise.all([sender.close(), receiver.close()]);
  });
});

describe("time to live", () => {
  it("drops expired messages when the queue does not dead-letter on expiration", async () => {
    const sender = sb.client.createSender("ttl-drop");
    await sender.sendMessages([{ body: "old" }, { body: "older" }]);
    await eventually(() => sb.emulator.queueCounts("ttl-drop").active === 0, { what: "expiry" });
    expect(sb.emulator.queueCounts("ttl-drop").deadLettered).toBe(0);
    const receiver = sb.client.createReceiver("ttl-drop");
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 })).toHaveLength(0);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("moves expired messages to the DLQ with reason TTLExpiredException, unreceived", async () => {
    const sender = sb.client.createSender("ttl-dlq");
    await sender.sendMessages({ body: "stale", messageId: "stale-1" });
    await eventually(() => sb.emulator.queueCounts("ttl-dlq").deadLettered === 1, { what: "dead-lettering" });
    expect(sb.emulator.queueCounts("ttl-dlq").active).toBe(0);
    const dlq = sb.client.createReceiver("ttl-dlq", {
      subQueueType: "deadLetter",
      receiveMode: "receiveAndDelete",
    });
    const [dead] = await dlq.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(dead).toMatchObject({
      messageId: "stale-1",
      deadLetterReason: "TTLExpiredException",
    });
    expect(dead?.deadLetterSource).toBeUndefined();
    await Promise.all([sender.close(), dlq.close()]);
  });

  it("honours a message TTL shorter than the queue's, and lets a locked message outlive it", async () => {
    const sender = sb.client.createSender("ttl-message");
    const receiver = sb.client.createReceiver("ttl-message", { maxAutoLockRenewalDurationInMs: 0 });
    await receiver.receiveMessages(1, { maxWaitTimeInMs: 10 }); // attach first: the TTLs are short
    await sender.sendMessages([
      { body: "short", timeToLive: 1_000 },
      { body: "held", timeToLive: 1_000 },
      { body: "long" },
    ]);
    const [short, held] = await receiver.receiveMessages(2, { maxWaitTimeInMs: 2_000 });
    expect([short?.body, held?.body]).toEqual(["short", "held"]);
    expect(held?.timeToLive).toBe(1_000);
    await receiver.abandonMessage(short!); // back in the queue, where its TTL runs out
    await sleep(1_100);
    // "held" is past its TTL but still locked: the receiver may finish it (as in Service Bus).
    await receiver.completeMessage(held!);
    const rest = await receiveAll(receiver);
    expect(rest.map((m) => m.body)).toEqual(["long"]);
    expect(rest[0]?.timeToLive).toBe(86_400_000); // the queue's default (P1D) is reported when none was set
    expect(rest[0]?.expiresAtUtc?.getTime()).toBe(rest[0]!.enqueuedTimeUtc!.getTime() + 86_400_000);
    for (const m of rest) await receiver.completeMessage(m);
    expect(sb.emulator.queueCounts("ttl-message")).toMatchObject({ active: 0, deadLettered: 1 }); // "short"
    await Promise.all([sender.close(), receiver.close()]);
  });
});

describe("duplicate detection", () => {
  it("drops a second message with the same MessageId within the window, sent or scheduled", async () => {
    const sender = sb.client.createSender("dedup");
    await sender.sendMessages({ body: 1, messageId: "ORD-1001" });
    await sender.sendMessages({ body: 2, messageId: "ORD-1001" }); // succeeds, silently dropped
    await sender.sendMessages([
      { body: 3, messageId: "ORD-1002" },
      { body: 4, messageId: "ORD-1002" },
    ]);
    await sender.scheduleMessages({ body: 5, messageId: "ORD-1001" }, new Date(Date.now() + 100));
    expect(sb.emulator.queueCounts("dedup")).toMatchObject({ active: 2, scheduled: 0 });
    const receiver = sb.client.createReceiver("dedup", { receiveMode: "receiveAndDelete" });
    expect((await receiveAll(receiver)).map((m) => m.body)).toEqual([1, 3]);
    await sender.sendMessages({ body: 6, messageId: "ORD-1001" }); // received, but still within the window
    expect(sb.emulator.queueCounts("dedup").active).toBe(0);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("accepts the same MessageId again once the window has passed", async () => {
    const sender = sb.client.createSender("dedup-short");
    await sender.sendMessages({ body: 1, messageId: "again" });
    await sleep(400); // past DuplicateDetectionHistoryTimeWindow (PT0.3S)
    await sender.sendMessages({ body: 2, messageId: "again" });
    const receiver = sb.client.createReceiver("dedup-short", { receiveMode: "receiveAndDelete" });
    expect((await receiveAll(receiver)).map((m) => m.body)).toEqual([1, 2]);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("keeps duplicates on a queue without duplicate detection", async () => {
    const sender = sb.client.createSender("nodedup");
    await sender.sendMessages([
      { body: 1, messageId: "same" },
      { body: 2, messageId: "same" },
    ]);
    const receiver = sb.client.createReceiver("nodedup", { receiveMode: "receiveAndDelete" });
    expect((await receiveAll(receiver)).map((m) => m.body)).toEqual([1, 2]);
    await Promise.all([sender.close(), receiver.close()]);
  });
});
