/**
 * The flows of @azure/service-bus's published v7 samples (sendMessages, receiveMessagesLoop,
 * receiveMessagesStreaming, browseMessages, movingMessagesToDLQ + processMessageFromDLQ,
 * exceedMaxDeliveryCount, scheduledMessages, advanced/deferral), run unchanged in substance against
 * the emulator, with waits shortened. Sessions and topics are out of scope.
 */
import {
  isServiceBusError,
  type ProcessErrorArgs,
  type ServiceBusMessage,
  type ServiceBusMessageBatch,
  type ServiceBusReceivedMessage,
} from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sleep, startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

type SequenceNumber = NonNullable<ServiceBusReceivedMessage["sequenceNumber"]>;

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({
    scientists: {},
    streaming: {},
    recipes: {},
    poison: { MaxDeliveryCount: 3 },
    schedule: {},
    cooking: {},
  });
});
afterAll(async () => {
  await sb?.stop();
});

const firstSetOfMessages: ServiceBusMessage[] = [
  { body: "Albert Einstein" },
  { body: "Werner Heisenberg" },
  { body: "Marie Curie" },
  { body: "Steven Hawking" },
  { body: "Isaac Newton" },
];
const secondSetOfMessages: ServiceBusMessage[] = [
  { body: "Niels Bohr" },
  { body: "Michael Faraday" },
  { body: "Galileo Galilei" },
  { body: "Johannes Kepler" },
  { body: "Nikolaus Kopernikus" },
];

describe("sendMessages + receiveMessagesLoop + browseMessages", () => {
  it("sends an array, batches and a single message, then peeks and receives them in a loop", async () => {
    const sender = sb.client.createSender("scientists");
    await sender.sendMessages(firstSetOfMessages);
    let batch: ServiceBusMessageBatch = await sender.createMessageBatch();
    for (const message of secondSetOfMessages) {
      if (!batch.tryAddMessage(message)) {
        await sender.sendMessages(batch);
        batch = await sender.createMessageBatch();
        if (!batch.tryAddMessage(message)) throw new Error("Message too big to fit in a batch");
      }
    }
    await sender.sendMessages(batch);
    await sender.sendMessages({
      contentType: "application/json",
      subject: "Scientist",
      body: { firstName: "Albert", lastName: "Einstein" },
      timeToLive: 2 * 60 * 1000,
    });
    await sender.close();

    const queueReceiver = sb.client.createReceiver("scientists");
    const peeked = await queueReceiver.peekMessages(20);
    expect(peeked).toHaveLength(11);

    const allMessages: ServiceBusReceivedMessage[] = [];
    while (allMessages.length < 11) {
      const messages = await queueReceiver.receiveMessages(10, { maxWaitTimeInMs: 2_000 });
      if (!messages.length) break;
      allMessages.push(...messages);
      for (const message of messages) await queueReceiver.completeMessage(message);
    }
    await queueReceiver.close();
    expect(allMessages.map((m) => m.body)).toEqual([
      ...[...firstSetOfMessages, ...secondSetOfMessages].map((m) => m.body),
      { firstName: "Albert", lastName: "Einstein" },
    ]);
    expect(allMessages.at(-1)).toMatchObject({ subject: "Scientist", contentType: "application/json" });
    expect(sb.emulator.queueCounts("scientists").active).toBe(0);
  });
});

describe("receiveMessagesStreaming", () => {
  it("handles messages as they arrive, auto-completing them, until the subscription closes", async () => {
    const received: unknown[] = [];
    const errors: ProcessErrorArgs[] = [];
    const receiver = sb.client.createReceiver("streaming");
    const subscription = receiver.subscribe({
      processMessage: async (brokeredMessage: ServiceBusReceivedMessage) => {
        received.push(brokeredMessage.body);
      },
      processError: async (args: ProcessErrorArgs) => {
        errors.push(args);
        if (
          isServiceBusError(args.error) &&
          ["MessagingEntityNotFound", "UnauthorizedAccess"].includes(args.error.code)
        ) {
          await subscription.close();
        }
      },
    });
    const sender = sb.client.createSender("streaming");
    await sender.sendMessages(firstSetOfMessages);
    await eventually(() => received.length === 5 && sb.emulator.queueCounts("streaming").active === 0, {
      what: "five streamed and completed",
    });
    await receiver.close();
    expect(received).toEqual(firstSetOfMessages.map((m) => m.body));
    expect(errors).toEqual([]);
    await sender.close();
  });
});

describe("movingMessagesToDLQ + processMessageFromDLQ", () => {
  it("dead-letters a message with a reason, then repairs and resends it from the DLQ", async () => {
    const sender = sb.client.createSender("recipes");
    await sender.sendMessages({
      body: { name: "Creamy Chicken Pasta", type: "Dinner" },
      contentType: "application/json",
      subject: "Recipe",
    });
    const receiver = sb.client.createReceiver("recipes");
    const messages = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(messages).toHaveLength(1);
    await receiver.deadLetterMessage(messages[0]!, {
      deadLetterReason: "Incorrect Recipe type",
      deadLetterErrorDescription: "Recipe type does not match preferences.",
    });

    const dlqReceiver = sb.client.createReceiver("recipes", { subQueueType: "deadLetter" });
    const [dead] = await dlqReceiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(dead?.deadLetterReason).toBe("Incorrect Recipe type");
    const repairedMessage: ServiceBusMessage = { ...dead!, body: { ...dead!.body, type: "Lunch" } };
    await sender.sendMessages(repairedMessage);
    await dlqReceiver.completeMessage(dead!);

    const [repaired] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(repaired?.body).toEqual({ name: "Creamy Chicken Pasta", type: "Lunch" });
    expect(repaired?.subject).toBe("Recipe");
    await receiver.completeMessage(repaired!);
    expect(sb.emulator.queueCounts("recipes")).toMatchObject({ active: 0, deadLettered: 0 });
    await Promise.all([sender.close(), receiver.close(), dlqReceiver.close()]);
  });
});

describe("exceedMaxDeliveryCount", () => {
  it("abandons until the broker dead-letters, then drains the DLQ", async () => {
    const sender = sb.client.createSender("poison");
    await sender.sendMessages({ body: "unprocessable" });
    const receiver = sb.client.createReceiver("poison");
    const deliveryCounts: number[] = [];
    for (;;) {
      const msg = await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 });
      if (!msg[0]) break;
      deliveryCounts.push(msg[0].deliveryCount ?? -1);
      await receiver.abandonMessage(msg[0]);
    }
    expect(deliveryCounts).toEqual([0, 1, 2]);

    const deadletterReceiver = sb.client.createReceiver("poison", { subQueueType: "deadLetter" });
    const dead: unknown[] = [];
    for (;;) {
      const msg = await deadletterReceiver.receiveMessages(1, { maxWaitTimeInMs: 500 });
      if (!msg[0]) break;
      dead.push(msg[0].body);
      await deadletterReceiver.completeMessage(msg[0]);
    }
    expect(dead).toEqual(["unprocessable"]);
    await Promise.all([sender.close(), receiver.close(), deadletterReceiver.close()]);
  });
});

describe("scheduledMessages", () => {
  it("delivers scheduled messages only at their time to a subscribed receiver, minus the cancelled ones", async () => {
    const sender = sb.client.createSender("schedule");
    const messages: ServiceBusMessage[] = [...firstSetOfMessages, ...secondSetOfMessages].map((m) => ({
      body: m.body,
      subject: "Scientist",
    }));
    const scheduledEnqueueTimeUtc = new Date(Date.now() + 1_000);
    const sequenceNumbers = await sender.scheduleMessages(messages, scheduledEnqueueTimeUtc);
    await sender.cancelScheduledMessages(sequenceNumbers.slice(5)); // keep the first five

    const received: { body: unknown; at: number }[] = [];
    const queueReceiver = sb.client.createReceiver("schedule");
    const subscription = queueReceiver.subscribe({
      processMessage: async (brokeredMessage: ServiceBusReceivedMessage) => {
        received.push({ body: brokeredMessage.body, at: Date.now() });
        await queueReceiver.completeMessage(brokeredMessage);
      },
      processError: async (args: ProcessErrorArgs) => {
        throw args.error;
      },
    });
    await eventually(() => received.length === 5, { what: "five scheduled messages" });
    expect(received.map((r) => r.body)).toEqual(firstSetOfMessages.map((m) => m.body));
    expect(received.every((r) => r.at >= scheduledEnqueueTimeUtc.getTime())).toBe(true); // none early
    await sleep(100);
    expect(received).toHaveLength(5); // and none of the cancelled ones late
    expect(sb.emulator.queueCounts("schedule")).toMatchObject({ active: 0, scheduled: 0 });
    await subscription.close();
    await Promise.all([sender.close(), queueReceiver.close()]);
  });
});

describe("advanced/deferral", () => {
  it("defers out-of-order steps, then processes them in order by sequence number", async () => {
    const sender = sb.client.createSender("cooking");
    const data = [
      { step: 1, title: "Shop" },
      { step: 2, title: "Unpack" },
      { step: 3, title: "Prepare" },
      { step: 4, title: "Cook" },
      { step: 5, title: "Eat" },
    ];
    // Sent in a fixed shuffled order (the sample shuffles with random delays).
    for (const index of [2, 0, 4, 1, 3]) {
      await sender.sendMessages({
        body: data[index],
        subject: "RecipeStep",
        contentType: "application/json",
      });
    }
    await sender.sendMessages({ body: "not a step", subject: "Unknown" });

    let receiver = sb.client.createReceiver("cooking");
    const deferredSteps = new Map<number, SequenceNumber>();
    const processed: number[] = [];
    let lastProcessedRecipeStep = 0;
    const subscription = receiver.subscribe(
      {
        processMessage: async (brokeredMessage: ServiceBusReceivedMessage) => {
          if (
            brokeredMessage.subject === "RecipeStep" &&
            brokeredMessage.contentType === "application/json"
          ) {
            const message = brokeredMessage.body as { step: number };
            if (message.step === lastProcessedRecipeStep + 1) {
              lastProcessedRecipeStep++;
              processed.push(message.step);
              await receiver.completeMessage(brokeredMessage);
            } else {
              deferredSteps.set(message.step, brokeredMessage.sequenceNumber!);
              await receiver.deferMessage(brokeredMessage);
            }
          } else {
            await receiver.deadLetterMessage(brokeredMessage);
          }
        },
        processError: async (args: ProcessErrorArgs) => {
          throw args.error;
        },
      },
      { autoCompleteMessages: false },
    );
    await eventually(
      () => {
        const counts = sb.emulator.queueCounts("cooking");
        return (
          counts.active === 0 && counts.deadLettered === 1 && processed.length + deferredSteps.size === 5
        );
      },
      { what: "every step handled or deferred" },
    );
    await subscription.close();
    await receiver.close();

    expect(processed).toEqual([1, 2]); // arrival order 3, 1, 5, 2, 4: steps 3, 4 and 5 came too early
    expect([...deferredSteps.keys()].sort()).toEqual([3, 4, 5]);

    receiver = sb.client.createReceiver("cooking");
    while (deferredSteps.size > 0) {
      const step = lastProcessedRecipeStep + 1;
      const [message] = await receiver.receiveDeferredMessages(deferredSteps.get(step)!);
      expect((message?.body as { step: number }).step).toBe(step);
      processed.push(step);
      await receiver.completeMessage(message!);
      deferredSteps.delete(step);
      lastProcessedRecipeStep++;
    }
    await receiver.close();
    expect(processed).toEqual([1, 2, 3, 4, 5]);
    expect(sb.emulator.queueCounts("cooking")).toMatchObject({ active: 0, deferred: 0, deadLettered: 1 });
    await sender.close();
  });
});
