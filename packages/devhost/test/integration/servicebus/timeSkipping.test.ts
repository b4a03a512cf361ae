// The emulator on a time-skipping clock: lock expiry, TTL and the duplicate-detection window come due on the
// clock, which a skipper moves on as soon as no message is on its way to a receiver.
import { afterEach, describe, expect, it } from "vitest";
import { HostClock, TimeSkipper } from "../../../src/timeSkipping";
import { startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

const MINUTE = 60 * 1000;
const T0 = new Date("2030-03-01T00:00:00.000Z");

describe("Service Bus emulator under time-skipping", () => {
  let bus: ServiceBusFixture | undefined;
  let skipper: TimeSkipper | undefined;

  afterEach(async () => {
    skipper?.stop();
    await bus?.stop();
    bus = undefined;
    skipper = undefined;
  });

  async function start(clock: HostClock): Promise<ServiceBusFixture> {
    bus = await startServiceBus(
      {
        locked: { LockDuration: "PT5M", MaxDeliveryCount: 5 },
        expiring: { DefaultMessageTimeToLive: "P1D", DeadLetteringOnMessageExpiration: true },
        deduplicated: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT10M" },
      },
      { clock },
    );
    return bus;
  }

  it("redelivers a message whose 5-minute lock lapsed, in well under a second", async () => {
    const clock = new HostClock(T0);
    const { client } = await start(clock);
    const sender = client.createSender("locked");
    await sender.sendMessages({ body: "held", messageId: "held" });
    await sender.close();
    const receiver = client.createReceiver("locked", { maxAutoLockRenewalDurationInMs: 0 });
    const [first] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
    expect(first?.deliveryCount).toBe(0);
    // The lock runs on the clock: five minutes from a time near T0.
    const lockedFor = first!.lockedUntilUtc!.getTime() - T0.getTime();
    expect(lockedFor).toBeGreaterThanOrEqual(5 * MINUTE);
    expect(lockedFor).toBeLessThan(5 * MINUTE + 10_000);
    skipper = new TimeSkipper(clock);
    skipper.start();
    const started = performance.now();
    // Not settled: once the receiver has nothing on its way, the clock jumps to the lock's expiry.
    const [again] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 3000 });
    const wallMs = performance.now() - started;
    await receiver.close();
    expect(again?.messageId).toBe("held");
    expect(again?.deliveryCount).toBe(1);
    expect(clock.nowMs() - first!.enqueuedTimeUtc!.getTime()).toBeGreaterThanOrEqual(5 * MINUTE);
    expect(wallMs).toBeLessThan(1000);
  });

  it("dead-letters a message when its one-day TTL passes on the clock", async () => {
    const clock = new HostClock(T0);
    const { client } = await start(clock);
    const sender = client.createSender("expiring");
    await sender.sendMessages({ body: "stale", messageId: "stale" });
    await sender.close();
    skipper = new TimeSkipper(clock);
    skipper.start();
    const started = performance.now();
    const dlq = client.createReceiver("expiring", {
      subQueueType: "deadLetter",
      receiveMode: "receiveAndDelete",
    });
    const [dead] = await dlq.receiveMessages(1, { maxWaitTimeInMs: 3000 });
    const wallMs = performance.now() - started;
    await dlq.close();
    expect(dead?.messageId).toBe("stale");
    expect(dead?.deadLetterReason).toBe("TTLExpiredException");
    expect(clock.nowMs() - T0.getTime()).toBeGreaterThanOrEqual(24 * 60 * MINUTE);
    expect(wallMs).toBeLessThan(1000);
  });

  it("forgets a message id once the duplicate-detection window has passed on the clock", async () => {
    const clock = new HostClock(T0);
    const { client } = await start(clock);
    const sender = client.createSender("deduplicated");
    await sender.sendMessages({ body: 1, messageId: "same" });
    await sender.sendMessages({ body: 2, messageId: "same" }); // dropped: within the window
    clock.skipTo(clock.nowMs() + 11 * MINUTE);
    await sender.sendMessages({ body: 3, messageId: "same" }); // kept: the window has passed
    await sender.close();
    const receiver = client.createReceiver("deduplicated", { receiveMode: "receiveAndDelete" });
    const got = await receiver.receiveMessages(3, { maxWaitTimeInMs: 500 });
    await receiver.close();
    expect(got.map((m) => m.body as number)).toEqual([1, 3]);
  });
});
