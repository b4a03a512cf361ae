/**
 * Topics and subscriptions through the real @azure/service-bus client: a send to a topic lands in every
 * subscription whose rules select it (Microsoft Learn, "Topic filters and actions",
 * learn.microsoft.com/azure/service-bus-messaging/topic-filters), and each subscription is received,
 * settled, lock-renewed and dead-lettered like a queue.
 */
import {
  isServiceBusError,
  type ServiceBusReceivedMessage,
  type ServiceBusReceiver,
} from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus(
    {},
    {
      topics: [
        {
          Name: "orders",
          Properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
          Subscriptions: [
            { Name: "all", Properties: { MaxDeliveryCount: 2 } }, // no rules: the $Default true filter
            {
              Name: "big-blue",
              Rules: [
                {
                  Name: "big",
                  Properties: {
                    FilterType: "Sql",
                    SqlFilter: { SqlExpression: "quantity >= 10 AND color = 'blue'" },
                  },
                },
              ],
            },
            {
              Name: "json",
              Rules: [
                {
                  Name: "json-eu",
                  Properties: {
                    FilterType: "Correlation",
                    CorrelationFilter: { ContentType: "application/json", Properties: { region: "eu" } },
                  },
                },
              ],
            },
            {
              Name: "tagged",
              Rules: [
                { Name: "plain-1", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "1=1" } } },
                {
                  Name: "plain-2",
                  Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "EXISTS(color)" } },
                },
                {
                  Name: "stamp",
                  Properties: {
                    FilterType: "Sql",
                    SqlFilter: { SqlExpression: "color IS NOT NULL" },
                    Action: {
                      SqlExpression: "SET sys.To = 'audit'; SET doubled = quantity * 2; REMOVE color",
                    },
                  },
                },
              ],
            },
            {
              Name: "none",
              Rules: [
                { Name: "never", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "1=0" } } },
              ],
            },
          ],
        },
      ],
    },
  );
});
afterAll(async () => {
  await sb?.stop();
});

async function drain(receiver: ServiceBusReceiver, expected: number): Promise<ServiceBusReceivedMessage[]> {
  const got: ServiceBusReceivedMessage[] = [];
  const deadline = Date.now() + 5_000;
  while (got.length < expected && Date.now() < deadline) {
    got.push(...(await receiver.receiveMessages(expected - got.length, { maxWaitTimeInMs: 300 })));
  }
  // Nothing more than expected arrives.
  got.push(...(await receiver.receiveMessages(10, { maxWaitTimeInMs: 200 })));
  return got;
}

async function receiveAll(subscription: string, expected: number): Promise<ServiceBusReceivedMessage[]> {
  const receiver = sb.client.createReceiver("orders", subscription, { receiveMode: "receiveAndDelete" });
  try {
    return await drain(receiver, expected);
  } finally {
    await receiver.close();
  }
}

describe("topics", () => {
  it("fans a send out to each subscription whose rules match; a subscription without rules gets everything", async () => {
    const sender = sb.client.createSender("orders");
    await sender.sendMessages([
      { messageId: "1", body: "big blue", applicationProperties: { color: "blue", quantity: 12 } },
      { messageId: "2", body: "small blue", applicationProperties: { color: "blue", quantity: 2 } },
      {
        messageId: "3",
        body: { json: true },
        contentType: "application/json",
        applicationProperties: { region: "eu" },
      },
      {
        messageId: "4",
        body: "json us",
        contentType: "application/json",
        applicationProperties: { region: "us" },
      },
    ]);
    await sender.close();

    const ids = (messages: ServiceBusReceivedMessage[]) => messages.map((m) => m.messageId);
    expect(ids(await receiveAll("all", 4))).toEqual(["1", "2", "3", "4"]);
    expect(ids(await receiveAll("big-blue", 1))).toEqual(["1"]);
    expect(ids(await receiveAll("json", 1))).toEqual(["3"]);
    expect(ids(await receiveAll("none", 0))).toEqual([]);

    // "tagged": rules without actions give one copy together; the rule with an action gives its own copy,
    // carrying RuleName and the action's changes (Learn, "Topic filters and actions").
    const tagged = await receiveAll("tagged", 6);
    const plain = tagged.filter((m) => m.applicationProperties?.RuleName === undefined);
    const stamped = tagged.filter((m) => m.applicationProperties?.RuleName === "stamp");
    expect(ids(plain)).toEqual(["1", "2", "3", "4"]);
    expect(ids(stamped)).toEqual(["1", "2"]);
    expect(stamped[0]?.to).toBe("audit");
    expect(stamped[0]?.applicationProperties).toEqual({ quantity: 12, doubled: 24, RuleName: "stamp" });
    expect(plain[0]?.applicationProperties).toEqual({ color: "blue", quantity: 12 });
  });

  it("drops a duplicate at the topic, when the topic requires duplicate detection", async () => {
    const sender = sb.client.createSender("orders");
    await sender.sendMessages({ messageId: "dup", body: "first" });
    await sender.sendMessages({ messageId: "dup", body: "second" });
    await sender.close();
    const got = await receiveAll("all", 1);
    expect(got.map((m) => m.body)).toEqual(["first"]);
    await receiveAll("tagged", 1);
  });

  it("peek-locks a subscription's messages: complete, abandon, renew, and dead-letter at MaxDeliveryCount", async () => {
    const sender = sb.client.createSender("orders");
    await sender.sendMessages([
      { messageId: "keep", body: "keep" },
      { messageId: "poison", body: "poison" },
    ]);
    await sender.close();
    await receiveAll("tagged", 2);

    const receiver = sb.client.createReceiver("orders", "all");
    const [keep, poison] = await drain(receiver, 2);
    expect(keep?.messageId).toBe("keep");
    const lockedUntil = keep!.lockedUntilUtc!.getTime();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await receiver.renewMessageLock(keep!)).getTime()).toBeGreaterThan(lockedUntil);
    await receiver.completeMessage(keep!);

    // MaxDeliveryCount 2: the second abandon moves it to the subscription's dead-letter queue.
    await receiver.abandonMessage(poison!);
    const [again] = await drain(receiver, 1);
    expect(again?.messageId).toBe("poison");
    expect(again?.deliveryCount).toBe(1);
    await receiver.abandonMessage(again!);
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 })).toEqual([]);
    await receiver.close();

    const dlq = sb.client.createReceiver("orders", "all", { subQueueType: "deadLetter" });
    const [dead] = await drain(dlq, 1);
    expect(dead?.messageId).toBe("poison");
    expect(dead?.deadLetterReason).toBe("MaxDeliveryCountExceeded");
    await dlq.completeMessage(dead!);
    await dlq.close();
    expect(sb.emulator.queueCounts("orders/Subscriptions/all")).toMatchObject({ active: 0, deadLettered: 0 });
  });

  it("dead-letters on request into the subscription's dead-letter queue", async () => {
    const sender = sb.client.createSender("orders");
    await sender.sendMessages({
      messageId: "bad",
      body: "bad",
      applicationProperties: { color: "blue", quantity: 50 },
    });
    await sender.close();
    const receiver = sb.client.createReceiver("orders", "big-blue");
    const [bad] = await drain(receiver, 1);
    await receiver.deadLetterMessage(bad!, {
      deadLetterReason: "Invalid",
      deadLetterErrorDescription: "no stock",
    });
    await receiver.close();
    const dlq = sb.client.createReceiver("orders", "big-blue", {
      subQueueType: "deadLetter",
      receiveMode: "receiveAndDelete",
    });
    const [dead] = await drain(dlq, 1);
    await dlq.close();
    expect([dead?.messageId, dead?.deadLetterReason, dead?.deadLetterErrorDescription]).toEqual([
      "bad",
      "Invalid",
      "no stock",
    ]);
    await receiveAll("all", 1);
    await receiveAll("tagged", 2);
  });

  it("schedules a message on a topic: it reaches the subscriptions when due, or never once cancelled", async () => {
    const sender = sb.client.createSender("orders");
    const soon = new Date(Date.now() + 1_500); // long enough for the cancel to come first
    const [due] = await sender.scheduleMessages({ messageId: "later", body: "later" }, soon);
    const [cancelled] = await sender.scheduleMessages({ messageId: "never", body: "never" }, soon);
    await sender.cancelScheduledMessages(cancelled!);
    await sender.close();
    expect(due).toBeDefined();
    const got = await receiveAll("all", 1);
    expect(got.map((m) => m.messageId)).toEqual(["later"]);
    await receiveAll("tagged", 1);
  });

  it("refuses receiving from a topic, sending to a subscription, and unknown subscriptions", async () => {
    const fromTopic = sb.client.createReceiver("orders");
    const refused = await fromTopic
      .receiveMessages(1, { maxWaitTimeInMs: 500 })
      .catch((error: unknown) => error);
    await fromTopic.close();
    expect(isServiceBusError(refused) || refused instanceof Error).toBe(true);

    const toSubscription = sb.client.createSender("orders/Subscriptions/all");
    const sendError = await toSubscription.sendMessages({ body: "x" }).catch((error: unknown) => error);
    await toSubscription.close();
    expect(String((sendError as Error).message)).toMatch(/Cannot send to the subscription/);

    const unknown = sb.client.createReceiver("orders", "nope");
    const missing = await unknown
      .receiveMessages(1, { maxWaitTimeInMs: 500 })
      .catch((error: unknown) => error);
    await unknown.close();
    expect(isServiceBusError(missing) && missing.code).toBe("MessagingEntityNotFound");
  });
});
