/**
 * Peek-lock timing through the real client: LockDuration, renewMessageLock, the SDK's automatic lock
 * renewal, and what happens when a lock lapses (MessageLockLost, redelivery, MaxDeliveryCount).
 * Locks are short (the queue's LockDuration) so that the sleeps stay short.
 */
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sleep, startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({
    renewable: { LockDuration: "PT2S" },
    lapsing: { LockDuration: "PT0.6S", MaxDeliveryCount: 5 },
    exhausting: { LockDuration: "PT0.4S", MaxDeliveryCount: 2 },
  });
});
afterAll(async () => {
  await sb?.stop();
});

async function receiveOne(receiver: ServiceBusReceiver): Promise<ServiceBusReceivedMessage> {
  const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 3_000 });
  if (!message) throw new Error("no message received");
  return message;
}

/** With locks this short the SDK's auto-renewal would renew them; these tests want them to lapse. */
const noAutoRenewal = { maxAutoLockRenewalDurationInMs: 0 };

describe("lock duration and renewal", () => {
  it("locks for the queue's LockDuration, and renewMessageLock extends it", async () => {
    const sender = sb.client.createSender("renewable");
    await sender.sendMessages({ body: "slow work" });
    const receiver = sb.client.createReceiver("renewable", noAutoRenewal);
    const asked = Date.now();
    const message = await receiveOne(receiver);
    const firstLock = message.lockedUntilUtc!.getTime();
    expect(firstLock).toBeGreaterThanOrEqual(asked + 2_000); // LockDuration PT2S from the delivery
    expect(firstLock).toBeLessThanOrEqual(Date.now() + 2_000);

    await sleep(1_200);
    const renewed = await receiver.renewMessageLock(message);
    expect(renewed.getTime()).toBeGreaterThan(firstLock + 1_000);
    expect(message.lockedUntilUtc?.getTime()).toBe(renewed.getTime()); // the SDK updates the message

    await sleep(1_200); // past the first lock, within the renewed one
    await receiver.completeMessage(message);
    expect(sb.emulator.queueCounts("renewable")).toMatchObject({ active: 0, locked: 0 });
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("keeps the lock while the SDK renews it automatically (the default)", async () => {
    const sender = sb.client.createSender("renewable");
    await sender.sendMessages({ body: "auto" });
    const receiver = sb.client.createReceiver("renewable");
    const message = await receiveOne(receiver);
    const firstLock = message.lockedUntilUtc!.getTime();
    await sleep(3_000); // 1.5 lock durations: lost without renewal
    expect(sb.emulator.queueCounts("renewable")).toMatchObject({ active: 1, locked: 1 });
    expect(message.lockedUntilUtc!.getTime()).toBeGreaterThan(firstLock);
    await receiver.completeMessage(message);
    expect(sb.emulator.queueCounts("renewable").active).toBe(0);
    await Promise.all([sender.close(), receiver.close()]);
  });
});

describe("lapsed locks", () => {
  it("fails a late complete with MessageLockLost and redelivers the message with a higher delivery count", async () => {
    const sender = sb.client.createSender("lapsing");
    await sender.sendMessages({ body: "too slow", messageId: "slow-1" });
    const receiver = sb.client.createReceiver("lapsing", noAutoRenewal);
    const message = await receiveOne(receiver);
    await sleep(900);

    await expect(receiver.completeMessage(message)).rejects.toMatchObject({ code: "MessageLockLost" });
    await expect(receiver.renewMessageLock(message)).rejects.toMatchObject({ code: "MessageLockLost" });

    const again = await receiveOne(receiver);
    expect(again.messageId).toBe("slow-1");
    expect(again.deliveryCount).toBe(1);
    expect(again.lockToken).not.toBe(message.lockToken);
    await receiver.completeMessage(again);
    expect(sb.emulator.queueCounts("lapsing")).toMatchObject({ active: 0, deadLettered: 0 });
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("dead-letters a message whose locks lapse MaxDeliveryCount times", async () => {
    const sender = sb.client.createSender("exhausting");
    await sender.sendMessages({ body: "never finished" });
    const receiver = sb.client.createReceiver("exhausting", noAutoRenewal);
    expect((await receiveOne(receiver)).deliveryCount).toBe(0);
    expect((await receiveOne(receiver)).deliveryCount).toBe(1); // arrives when the first lock lapses
    await eventually(() => sb.emulator.queueCounts("exhausting").deadLettered === 1, {
      what: "the second lapse",
    });
    expect(sb.emulator.queueCounts("exhausting").active).toBe(0);

    const dlq = sb.client.createReceiver("exhausting", {
      subQueueType: "deadLetter",
      receiveMode: "receiveAndDelete",
    });
    const dead = await receiveOne(dlq);
    expect(dead.body).toBe("never finished");
    expect(dead.deadLetterReason).toBe("MaxDeliveryCountExceeded");
    await Promise.all([sender.close(), receiver.close(), dlq.close()]);
  });
});
