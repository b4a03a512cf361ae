import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { ServiceBusClient } from "@azure/service-bus";
import { afterEach, describe, expect, it } from "vitest";
import { startEmulators } from "../../../src/emulators";
import { HostClock } from "../../../src/timeSkipping";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";
import { startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const RealDate = Date;
/** Half past midnight: the hourly timer is next due at 01:00. */
const T0 = new Date("2030-03-01T00:30:00.000Z");

interface Report {
  hourly: Array<{ now: string; isPastDue: boolean }>;
  received: Array<{ message: { id: string }; now: number; enqueuedTimeUtc: string; deliveryCount: number }>;
  attempts: number[];
}

// The tests measure wall time with performance.now(): Date is the app's to shim.
async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe("devhost time-skipping", () => {
  let host: TestDevHost | undefined;
  let bus: ServiceBusFixture | undefined;

  afterEach(async () => {
    await host?.stop();
    await bus?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
    host = undefined;
    bus = undefined;
  });

  async function start(clock: HostClock, settings: Record<string, string> = {}): Promise<TestDevHost> {
    bus = await startServiceBus({ scheduled: { LockDuration: "PT1M", MaxDeliveryCount: 5 } }, { clock });
    host = await startTestDevHost("time-skipping-app", {
      timeSkipping: true,
      clock,
      settings: {
        ServiceBusConnection: bus.emulator.connectionString,
        SCHEDULED_QUEUE: "scheduled",
        // Yearly (1 January), unless a test wants it hourly: each occurrence is a stop on the way.
        HOURLY_SCHEDULE: "0 0 0 1 1 *",
        ...settings,
      },
    });
    return host;
  }

  const report = async (running: TestDevHost): Promise<Report> =>
    (await (await fetch(`${running.url}/api/report`)).json()) as Report;

  it("completes an orchestration with a 7-day durable timer in well under a second", async () => {
    const clock = new HostClock(T0);
    const running = await start(clock);
    const started = performance.now();
    const id = running.engine.startNew("weekLong");
    const status = await running.engine.waitForCompletion(id);
    const wallMs = performance.now() - started;
    expect(status.runtimeStatus).toBe("Completed");
    const { before, after } = status.output as Record<"before" | "after", { now: string; nowMs: number }>;
    // The app's own `new Date()` and Date.now() in the activity after the timer read a week later.
    expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(7 * DAY);
    expect(after.nowMs - before.nowMs).toBeGreaterThanOrEqual(7 * DAY);
    expect(Date.parse(before.now)).toBeGreaterThanOrEqual(T0.getTime());
    expect(clock.nowMs() - T0.getTime()).toBeGreaterThanOrEqual(7 * DAY);
    expect(wallMs).toBeLessThan(1000);
  });

  it("stands still while an invocation waits for a slow remote service, though a timer is pending", async () => {
    const remote = http.createServer((_request, response) => {
      setTimeout(() => response.end("pong"), 200);
    });
    await new Promise<void>((resolve) => remote.listen(0, "127.0.0.1", resolve));
    try {
      const clock = new HostClock(T0);
      const running = await start(clock, {
        REMOTE_URL: `http://127.0.0.1:${(remote.address() as AddressInfo).port}/`,
      });
      // The timer trigger's next occurrence (1 January) is pending all along: an idle host would jump to it.
      expect(clock.pendingTimerCount()).toBeGreaterThan(0);
      const got = (await (await fetch(`${running.url}/api/callRemote`)).json()) as Record<string, unknown>;
      expect(got.answer).toBe("pong");
      const took = (got.after as number) - (got.before as number);
      expect(took).toBeGreaterThanOrEqual(150);
      expect(took).toBeLessThan(10_000);
    } finally {
      await new Promise((resolve) => remote.close(resolve));
    }
  });

  it("plays three activity retries with production back-offs (5, 10, 20 minutes) in well under a second", async () => {
    const running = await start(new HostClock(T0));
    const started = performance.now();
    const status = await running.engine.waitForCompletion(running.engine.startNew("retried"));
    const wallMs = performance.now() - started;
    expect(status.runtimeStatus).toBe("Completed");
    const attempts = status.output as number[];
    expect(attempts).toHaveLength(4);
    const gaps = attempts.slice(1).map((at, i) => at - (attempts[i] as number));
    expect(gaps[0]).toBeGreaterThanOrEqual(5 * MINUTE);
    expect(gaps[1]).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(gaps[2]).toBeGreaterThanOrEqual(20 * MINUTE);
    gaps.forEach((gap) => expect(gap).toBeLessThan(21 * MINUTE));
    expect(wallMs).toBeLessThan(1000);
  });

  it("fires an hourly timer trigger three times within a second", async () => {
    const running = await start(new HostClock(T0), { HOURLY_SCHEDULE: "0 0 * * * *" });
    const started = performance.now();
    const { hourly } = await until(
      async () => {
        const got = await report(running);
        return got.hourly.length >= 3 ? got : undefined;
      },
      5000,
      "three hourly ticks",
    );
    const wallMs = performance.now() - started;
    expect(hourly.slice(0, 3).map((tick) => tick.now.slice(11, 16))).toEqual(["01:00", "02:00", "03:00"]);
    expect(hourly.slice(0, 3).every((tick) => !tick.isPastDue)).toBe(true);
    expect(wallMs).toBeLessThan(1000);
    // The Date shim is in place while the host runs, and gone once it stopped.
    expect(Date).not.toBe(RealDate);
    await running.stop();
    expect(Date).toBe(RealDate);
  });

  it("delivers messages scheduled up to two hours ahead, in schedule order, and redelivers an abandoned one", async () => {
    const clock = new HostClock(T0);
    const running = await start(clock);
    // The test's own client is no work of the host's: hold time still while it schedules.
    const release = clock.addBusyProbe(() => true);
    const sender = bus!.client.createSender("scheduled");
    const base = clock.nowMs();
    const plan = [
      { id: "two-hours", at: base + 2 * HOUR },
      { id: "one-hour", at: base + HOUR, failFirst: true },
      { id: "half-hour", at: base + 30 * MINUTE },
    ];
    const started = performance.now();
    for (const { id, at, failFirst } of plan) {
      await sender.scheduleMessages({ body: { id, ...(failFirst ? { failFirst } : {}) } }, new Date(at));
    }
    await sender.close();
    release();
    const { received } = await until(
      async () => {
        const got = await report(running);
        return got.received.length >= 4 ? got : undefined;
      },
      5000,
      "four deliveries",
    );
    const wallMs = performance.now() - started;
    expect(received.map((r) => `${r.message.id}#${r.deliveryCount}`)).toEqual([
      "half-hour#1",
      "one-hour#1",
      "one-hour#2",
      "two-hours#1",
    ]);
    for (const r of received) {
      const due = plan.find((p) => p.id === r.message.id)!.at;
      expect(r.now).toBeGreaterThanOrEqual(due);
      expect(Date.parse(r.enqueuedTimeUtc)).toBeGreaterThanOrEqual(due - 1000);
    }
    expect(wallMs).toBeLessThan(2000);
  });

  it("runs the embedded Service Bus emulator it starts on its own clock", async () => {
    const port = await freePort();
    const connection =
      `Endpoint=sb://127.0.0.1:${port};SharedAccessKeyName=RootManageSharedAccessKey;` +
      `SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;`;
    host = await startTestDevHost("time-skipping-app", {
      timeSkipping: true,
      emulators: true,
      startEmulators,
      settings: {
        ServiceBusConnection: connection,
        SCHEDULED_QUEUE: "scheduled",
        HOURLY_SCHEDULE: "0 0 0 1 1 *",
      },
    });
    const running = host;
    expect(running.clock).toBeInstanceOf(HostClock);
    const clock = running.clock as HostClock;
    const client = new ServiceBusClient(connection);
    try {
      const release = clock.addBusyProbe(() => true);
      const due = clock.nowMs() + 3 * HOUR;
      await client.createSender("scheduled").scheduleMessages({ body: { id: "later" } }, new Date(due));
      release();
      const started = performance.now();
      const { received } = await until(
        async () => {
          const got = await report(running);
          return got.received.length >= 1 ? got : undefined;
        },
        5000,
        "the scheduled message",
      );
      expect(performance.now() - started).toBeLessThan(2000);
      expect(received[0]?.message.id).toBe("later");
      expect(received[0]?.now).toBeGreaterThanOrEqual(due);
    } finally {
      await client.close();
    }
  });
});
