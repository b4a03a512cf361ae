/**
 * Throughput of the Service Bus emulator through the real @azure/service-bus client on loopback:
 * sending (batches of up to 100), receiving + completing (subscribe, peekLock), and both at once.
 */
import { ServiceBusClient, type ServiceBusReceivedMessage, type ServiceBusSender } from "@azure/service-bus";
import { ServiceBusEmulator } from "devhost/emulators";

export interface ServiceBusBenchResult {
  /** Messages per second into the queue, sent in batches. */
  sendPerSec: number;
  /** Messages per second received (peekLock) and completed from a full queue. */
  receiveCompletePerSec: number;
  /** Messages per second sent, received and completed with sender and receiver running together. */
  roundTripPerSec: number;
  messages: number;
}

const QUEUE = "bench";
const BATCH_SIZE = 100;
const MAX_CONCURRENT_CALLS = 16;
const WARM_UP_MESSAGES = 500;
/** A small order-like body, about the size of this project's messages. */
const body = {
  orderId: "ORD-000000",
  customerId: "C-42",
  items: [{ sku: "SKU-1", quantity: 2, unitPrice: 9.99 }],
};

export async function benchServiceBus({ messages }: { messages: number }): Promise<ServiceBusBenchResult> {
  const emulator = new ServiceBusEmulator({
    port: 0,
    config: {
      UserConfig: {
        Namespaces: [{ Name: "bench", Queues: [{ Name: QUEUE, Properties: { LockDuration: "PT1M" } }] }],
      },
    },
  });
  await emulator.start();
  const client = new ServiceBusClient(emulator.connectionString);
  try {
    const sender = client.createSender(QUEUE);
    // Attach the links and let the JIT warm up both sides before timing anything.
    const warmUp = Math.min(WARM_UP_MESSAGES, messages);
    await sendAll(sender, warmUp);
    await receiveAndComplete(client, warmUp);

    let started = performance.now();
    await sendAll(sender, messages);
    const sendMs = performance.now() - started;

    started = performance.now();
    await receiveAndComplete(client, messages);
    const receiveMs = performance.now() - started;

    started = performance.now();
    await Promise.all([receiveAndComplete(client, messages), sendAll(sender, messages)]);
    const roundTripMs = performance.now() - started;

    await sender.close();
    return {
      sendPerSec: perSecond(messages, sendMs),
      receiveCompletePerSec: perSecond(messages, receiveMs),
      roundTripPerSec: perSecond(messages, roundTripMs),
      messages,
    };
  } finally {
    await client.close();
    await emulator.stop();
  }
}

async function sendAll(sender: ServiceBusSender, count: number): Promise<void> {
  for (let sent = 0; sent < count;) {
    const batch = await sender.createMessageBatch();
    while (sent < count && batch.count < BATCH_SIZE) {
      if (!batch.tryAddMessage({ body: { ...body, orderId: `ORD-${sent}` }, messageId: `m-${sent}` })) break;
      sent++;
    }
    await sender.sendMessages(batch);
  }
}

/** Subscribes until `count` messages have been received and completed, then closes the receiver. */
async function receiveAndComplete(client: ServiceBusClient, count: number): Promise<void> {
  const receiver = client.createReceiver(QUEUE);
  let completed = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      receiver.subscribe(
        {
          processMessage: async (message: ServiceBusReceivedMessage) => {
            await receiver.completeMessage(message);
            if (++completed === count) resolve();
          },
          processError: async (args) => reject(args.error),
        },
        { autoCompleteMessages: false, maxConcurrentCalls: MAX_CONCURRENT_CALLS },
      );
    });
  } finally {
    await receiver.close();
  }
}

function perSecond(count: number, ms: number): number {
  return Math.round((count * 1000) / ms);
}
