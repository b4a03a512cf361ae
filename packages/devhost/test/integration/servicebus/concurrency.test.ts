/**
 * Streaming receivers through the real client: several subscribe() receivers sharing one queue, each
 * message handled once; maxConcurrentCalls; and the automatic abandon when a handler throws.
 */
import type { ServiceBusReceivedMessage } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sleep, startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({ shared: {}, parallel: {}, flaky: { MaxDeliveryCount: 5 }, long: {} });
});
afterAll(async () => {
  await sb?.stop();
});

describe("subscribe()", () => {
  it("shares a queue among concurrent receivers, each message handled exactly once", async () => {
    const handledBy = new Map<number, number[]>(); // body -> receiver indexes that handled it
    const receivers = [0, 1, 2].map(() => sb.client.createReceiver("shared"));
    const subscriptions = receivers.map((receiver, index) =>
      receiver.subscribe({
        processMessage: async (message: ServiceBusReceivedMessage) => {
          handledBy.set(message.body as number, [...(handledBy.get(message.body as number) ?? []), index]);
          await sleep(5); // autoCompleteMessages completes it once this returns
        },
        processError: async (args) => {
          throw args.error;
        },
      }),
    );
    await eventually(() => sb.emulator.receiverCount("shared") === 3, { what: "three attached receivers" });

    const sender = sb.client.createSender("shared");
    const bodies = Array.from({ length: 30 }, (_, i) => i);
    await sender.sendMessages(bodies.map((body) => ({ body })));
    await eventually(() => handledBy.size === 30 && sb.emulator.queueCounts("shared").active === 0, {
      what: "all 30 handled and completed",
    });

    expect([...handledBy.keys()].sort((a, b) => a - b)).toEqual(bodies);
    expect([...handledBy.values()].every((by) => by.length === 1)).toBe(true);
    const perReceiver = [0, 1, 2].map((i) => [...handledBy.values()].filter(([by]) => by === i).length);
    expect(perReceiver.every((count) => count > 0)).toBe(true); // the load is shared, not hogged
    await Promise.all(subscriptions.map((s) => s.close()));
    await Promise.all([...receivers.map((r) => r.close()), sender.close()]);
    await eventually(() => sb.emulator.receiverCount("shared") === 0, { what: "receivers detached" });
  });

  it("runs up to maxConcurrentCalls handlers at once on one receiver", async () => {
    let running = 0;
    let peak = 0;
    let done = 0;
    const receiver = sb.client.createReceiver("parallel");
    const subscription = receiver.subscribe(
      {
        processMessage: async () => {
          peak = Math.max(peak, ++running);
          await sleep(50);
          running--;
          done++;
        },
        processError: async (args) => {
          throw args.error;
        },
      },
      { maxConcurrentCalls: 4 },
    );
    const sender = sb.client.createSender("parallel");
    await sender.sendMessages(Array.from({ length: 12 }, (_, i) => ({ body: i })));
    await eventually(() => done === 12 && sb.emulator.queueCounts("parallel").active === 0, {
      what: "12 handled",
    });
    expect(peak).toBe(4);
    await subscription.close();
    await Promise.all([receiver.close(), sender.close()]);
  });

  it("abandons a message whose handler throws, so that it comes back with a higher delivery count", async () => {
    const attempts: number[] = [];
    const errors: string[] = [];
    const receiver = sb.client.createReceiver("flaky");
    const subscription = receiver.subscribe({
      processMessage: async (message: ServiceBusReceivedMessage) => {
        attempts.push(message.deliveryCount ?? -1);
        if (attempts.length < 3) throw new Error(`transient failure ${attempts.length}`);
      },
      processError: async (args) => {
        errors.push(`${args.errorSource}: ${args.error.message}`);
      },
    });
    const sender = sb.client.createSender("flaky");
    await sender.sendMessages({ body: "retry me" });
    await eventually(() => attempts.length === 3 && sb.emulator.queueCounts("flaky").active === 0, {
      what: "success on the third attempt",
    });
    expect(attempts).toEqual([0, 1, 2]);
    expect(errors).toEqual([
      "processMessageCallback: transient failure 1",
      "processMessageCallback: transient failure 2",
    ]);
    expect(sb.emulator.queueCounts("flaky").deadLettered).toBe(0);
    await subscription.close();
    await Promise.all([receiver.close(), sender.close()]);
  });
  it("keeps delivering past 2048 peek-locked messages on one link", async () => {
    // rhea keeps each unsettled delivery in its session (2048 slots) until both ends have settled it;
    // the SDK never confirms the broker's final settlement, which once stalled every receiver here.
    const total = 2_100;
    let done = 0;
    const receiver = sb.client.createReceiver("long");
    const subscription = receiver.subscribe(
      {
        processMessage: async () => {
          done++;
        },
        processError: async (args) => {
          throw args.error;
        },
      },
      { maxConcurrentCalls: 8 },
    );
    const sender = sb.client.createSender("long");
    for (let start = 0; start < total; start += 300) {
      await sender.sendMessages(
        Array.from({ length: Math.min(300, total - start) }, (_, i) => ({ body: start + i })),
      );
    }
    await eventually(() => done === total && sb.emulator.queueCounts("long").active === 0, {
      timeoutMs: 15_000,
      what: `all ${total} completed`,
    });
    await subscription.close();
    await Promise.all([receiver.close(), sender.close()]);
  });
});
