/**
 * The queues around the app in end-to-end tests: what a queue received over a test file, peeks that leave
 * messages in place (dead letters, set-aside messages), and sending a message of the test's own.
 */
import { ServiceBusClient } from "@azure/service-bus";
import type { E2E } from "./e2e";
import { pollUntil } from "./wait";

/**
 * Collects what a queue receives across a test file: each call drains the queue (receive-and-delete) into the
 * log, so a test can wait for a message that is sent just after a state write and still see earlier ones.
 */
export interface QueueLog {
  /** Everything received so far, after draining what is on the queue now. */
  all(): Promise<unknown[]>;
  /** Drains until a message matches; fails after `timeoutMs` listing what was seen. */
  waitFor(match: (message: unknown) => boolean, timeoutMs?: number): Promise<unknown>;
}

export function queueLog(e2e: E2E, queue: string): QueueLog {
  const seen: unknown[] = [];
  const all = async () => {
    seen.push(...(await e2e.drain(queue)));
    return [...seen];
  };
  return {
    all,
    async waitFor(match, timeoutMs = 15_000) {
      // A read of an empty queue waits half a second for messages: that is the pause between reads.
      const received = await pollUntil(
        all,
        (messages) => messages.some(match),
        (messages) =>
          `no matching message on ${queue} within ${timeoutMs} ms; seen: ${JSON.stringify(messages)}`,
        { timeoutMs, intervalMs: 10 },
      );
      return received.find(match);
    },
  };
}

export interface PeekedMessage {
  messageId: string | number | undefined;
  body: unknown;
  deadLetterReason: string | undefined;
  deadLetterErrorDescription: string | undefined;
  deliveryCount: number | undefined;
  subject: string | undefined;
  applicationProperties: Record<string, unknown>;
}
export type DeadLetter = PeekedMessage;

/**
 * Every message on `queue` (or its dead-letter subqueue) right now, left in place. A fresh client each time:
 * the SDK keeps the peek cursor on the management link it shares per entity, so a second peek through the same
 * client would start after the messages already seen.
 */
export async function peekAll(e2e: E2E, queue: string, subQueue?: "deadLetter"): Promise<PeekedMessage[]> {
  const client = new ServiceBusClient(e2e.emulators.serviceBusConnectionString);
  try {
    const receiver = client.createReceiver(queue, subQueue ? { subQueueType: subQueue } : {});
    return (await receiver.peekMessages(250)).map((m) => ({
      messageId: m.messageId as string | number | undefined,
      body: m.body as unknown,
      deadLetterReason: m.deadLetterReason,
      deadLetterErrorDescription: m.deadLetterErrorDescription,
      deliveryCount: m.deliveryCount,
      subject: m.subject,
      applicationProperties: { ...(m.applicationProperties ?? {}) },
    }));
  } finally {
    await client.close();
  }
}

/** Peeks the dead-letter subqueue of `queue` until a message with `messageId` is there (it stays there). */
export async function waitForDeadLetter(
  e2e: E2E,
  queue: string,
  messageId: string,
  timeoutMs = 30_000,
): Promise<DeadLetter> {
  const ours = (m: PeekedMessage) => m.messageId === messageId;
  const deadLetters = await pollUntil(
    () => peekAll(e2e, queue, "deadLetter"),
    (messages) => messages.some(ours),
    (messages) =>
      `${messageId} was not dead-lettered on ${queue} within ${timeoutMs} ms; ` +
      `dead letters there: ${JSON.stringify(messages.map((m) => m.messageId))}`,
    { timeoutMs, intervalMs: 250 },
  );
  return deadLetters.find(ours)!;
}

/**
 * Peeks rejected-messages until the message a trigger of `sourceQueue` refused, sent under `originalMessageId`, is
 * set aside there (it stays there), and gives it back with the reason the app recorded.
 */
export async function waitForRejected(
  e2e: E2E,
  sourceQueue: string,
  originalMessageId: string,
  timeoutMs = 30_000,
): Promise<PeekedMessage> {
  const ours = (m: PeekedMessage) =>
    m.applicationProperties.rejectedFrom === sourceQueue &&
    m.applicationProperties.originalMessageId === originalMessageId;
  const rejected = await pollUntil(
    () => peekAll(e2e, "rejected-messages"),
    (messages) => messages.some(ours),
    (messages) =>
      `${sourceQueue} message ${originalMessageId} was not set aside on rejected-messages within ${timeoutMs} ms; ` +
      `there: ${JSON.stringify(messages.map((m) => m.applicationProperties))}`,
    { timeoutMs, intervalMs: 100 },
  );
  return rejected.find(ours)!;
}

/** Sends one message to a queue of the app as any producer could: body, MessageId and content type as given. */
export async function sendToQueue(
  e2e: E2E,
  queue: string,
  body: unknown,
  messageId: string,
  contentType: string | undefined = "application/json",
): Promise<void> {
  const sender = e2e.bus.createSender(queue);
  try {
    await sender.sendMessages({ body, messageId, ...(contentType ? { contentType } : {}) });
  } finally {
    await sender.close();
  }
}
