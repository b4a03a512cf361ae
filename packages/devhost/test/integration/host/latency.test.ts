import fs from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { VirtualClock } from "../../../src/durable";
import type { DevHostOptions } from "../../../src/host";
import { LATENCY_PROFILES, type LatencyProfile } from "../../../src/latency/profiles";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";
import { eventually, sleep, startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

/** The azure-storage figures without cold starts, so that a test sees the hops alone. */
const AZURE_STORAGE_WARM: LatencyProfile = { ...LATENCY_PROFILES["azure-storage"], coldStart: undefined };
/** latency-app's host.json: maxQueuePollingInterval 1 s. */
const MAX_POLL_MS = 1_000;

interface Delay {
  hop: string;
  ms: number;
  line: string;
}

function delays(host: TestDevHost): Delay[] {
  return host.lines().flatMap((line) => {
    const match = /^Latency: (\w+) \+(\d+) ms/.exec(line);
    return match ? [{ hop: match[1] as string, ms: Number(match[2]), line }] : [];
  });
}

describe("devhost latency profiles", () => {
  let bus: ServiceBusFixture;
  let host: TestDevHost | undefined;

  beforeAll(async () => {
    bus = await startServiceBus({ work: { LockDuration: "PT30S", MaxDeliveryCount: 3 } });
  });
  afterEach(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
    host = undefined;
  });
  afterAll(async () => {
    await bus?.stop();
  });

  const start = async (options: Partial<DevHostOptions>): Promise<TestDevHost> =>
    (host = await startTestDevHost("latency-app", {
      ...options,
      settings: { ServiceBusConnection: bus.emulator.connectionString, ...options.settings },
    }));

  async function sendAndReceive(h: TestDevHost, ids: string[]): Promise<Map<string, number>> {
    const sender = bus.client.createSender("work");
    const sentAt = new Map<string, number>();
    for (const id of ids) {
      sentAt.set(id, Date.now());
      await sender.sendMessages({ body: { id } });
    }
    await sender.close();
    const received = await eventually(
      async () => {
        const seen = (await (await fetch(`${h.url}/api/received`)).json()) as Array<{
          id: string;
          at: number;
        }>;
        return ids.every((id) => seen.some((s) => s.id === id)) && seen;
      },
      { timeoutMs: 10_000, what: "the messages" },
    );
    return new Map(
      ids.map((id) => [id, (received.find((s) => s.id === id)?.at ?? 0) - (sentAt.get(id) ?? 0)]),
    );
  }

  async function runFlow(
    h: TestDevHost,
    instanceId: string,
  ): Promise<{ output: unknown; elapsedMs: number }> {
    const began = Date.now();
    h.engine.startNew("flow", { instanceId });
    h.engine.raiseEvent(instanceId, "go", "yes");
    const status = await h.engine.waitForCompletion(instanceId);
    return { output: status.output, elapsedMs: Date.now() - began };
  }

  it("azure-storage: delays Service Bus delivery and each durable hop within the profile's figures", async () => {
    const h = await start({ latencyProfile: AZURE_STORAGE_WARM, latencySeed: 42 });
    expect(h.lines()).toContain(
      "Latency profile azure-storage (seed 42, from the option): Service Bus delivery 10-50 ms, durable queues " +
        "polled with back-off up to 1 s over 1 control queue(s), no cold starts.",
    );

    const waited = await sendAndReceive(h, ["m1", "m2", "m3"]);
    const deliveries = delays(h).filter((d) => d.hop === "serviceBusDelivery");
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) expect(d.ms).toSatisfy((ms: number) => ms >= 10 && ms <= 50);
    for (const ms of waited.values()) expect(ms).toBeGreaterThanOrEqual(10);

    const { output, elapsedMs } = await runFlow(h, "flow-1");
    expect(output).toBe("did one/yes");
    const hops = delays(h).filter((d) => d.hop !== "serviceBusDelivery");
    expect(hops.map((d) => d.hop).sort()).toEqual(
      ["activityCompleted", "activityScheduled", "externalEvent", "orchestrationStart"].sort(),
    );
    for (const d of hops) expect(d.ms).toSatisfy((ms: number) => ms >= 20 && ms <= 100 + MAX_POLL_MS);
    // Start, then the activity there and back, one after the other: the run took at least their sum.
    const onPath = hops.filter((d) => d.hop !== "externalEvent").reduce((sum, d) => sum + d.ms, 0);
    expect(elapsedMs).toBeGreaterThanOrEqual(onPath - 5);
  });

  it("none (the default): no delay anywhere, and no latency lines", async () => {
    const h = await start({});
    await sendAndReceive(h, ["n1"]);
    expect((await runFlow(h, "flow-none")).output).toBe("did one/yes");
    expect(h.lines().filter((line) => line.startsWith("Latency"))).toEqual([]);
  });

  it("takes the profile and seed from the DEVHOST_LATENCY_* settings, and refuses a bad one", async () => {
    const h = await start({
      settings: { DEVHOST_LATENCY_PROFILE: "durable-task-scheduler", DEVHOST_LATENCY_SEED: "8" },
    });
    expect(h.lines().find((line) => line.startsWith("Latency profile"))).toMatch(
      /^Latency profile durable-task-scheduler \(seed 8, from the setting\)/,
    );
    await h.stop();
    host = undefined;
    await expect(start({ settings: { DEVHOST_LATENCY_PROFILE: "turbo" } })).rejects.toThrow(
      'DEVHOST_LATENCY_PROFILE: "turbo" is not a latency profile; allowed: none, azure-storage, durable-task-scheduler.',
    );
  });

  it("pays a group's cold start on its first invocation, and again only after it has been idle", async () => {
    const profile: LatencyProfile = {
      name: "test-cold-start",
      serviceBusDeliveryMs: [0, 0],
      durable: { kind: "push", orchestratorMessageMs: [0, 0], activityWorkItemMs: [0, 0] },
      coldStart: { idleAfterMs: 1_000, httpMs: [150, 200], triggerMs: [150, 200] },
    };
    const h = await start({ latencyProfile: profile, latencySeed: 1 });
    const ping = async (): Promise<number> => {
      const began = Date.now();
      expect((await fetch(`${h.url}/api/ping`)).status).toBe(200);
      return Date.now() - began;
    };
    const coldStarts = (group: string): Delay[] =>
      delays(h).filter((d) => d.hop === "coldStart" && d.line.includes(`group ${group},`));

    expect(await ping()).toBeGreaterThanOrEqual(150);
    await ping();
    expect(coldStarts("http")).toHaveLength(1);
    await sleep(1_200);
    expect(await ping()).toBeGreaterThanOrEqual(150);
    expect(coldStarts("http")).toHaveLength(2);

    // The durable group is a group of its own: one cold start for the whole orchestration.
    expect((await runFlow(h, "flow-cold")).output).toBe("did one/yes");
    expect(coldStarts("durable")).toHaveLength(1);
    expect(coldStarts("durable")[0]?.ms).toSatisfy((ms: number) => ms >= 150 && ms <= 200);
  });

  it("on a VirtualClock, takes durable hops (cold start included) on virtual time, and replays them by seed", async () => {
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const run = async (seed: number): Promise<{ lines: string[]; virtualMs: number; wallMs: number }> => {
      const clock = new VirtualClock(t0);
      const h = await start({ latencyProfile: "azure-storage", latencySeed: seed, clock });
      const began = Date.now();
      h.engine.startNew("flow", { instanceId: "replayed" });
      h.engine.raiseEvent("replayed", "go", "yes");
      await h.engine.runUntilIdle();
      expect(h.engine.getStatus("replayed")?.output).toBe("did one/yes");
      const result = {
        lines: delays(h).map((d) => d.line),
        virtualMs: clock.now().getTime() - t0,
        wallMs: Date.now() - began,
      };
      await h.stop();
      fs.rmSync(h.dataDir, { recursive: true, force: true });
      host = undefined;
      return result;
    };
    const first = await run(99);
    const ms = (hop: string): number =>
      Number(
        new RegExp(`^Latency: ${hop} \\+(\\d+) ms`).exec(
          first.lines.find((l) => l.includes(` ${hop} `)) ?? "",
        )?.[1],
      );
    expect(first.lines[0]).toMatch(/^Latency: coldStart \+\d+ ms \(group durable, not run yet\)/);
    expect(ms("coldStart")).toBeGreaterThanOrEqual(1_000);
    // Start (after the cold start), then the activity there and back: virtual time, not the test's.
    const onPath = ms("orchestrationStart") + ms("activityScheduled") + ms("activityCompleted");
    expect(ms("orchestrationStart")).toBeGreaterThanOrEqual(ms("coldStart"));
    expect(first.virtualMs).toBeGreaterThanOrEqual(onPath);
    expect(first.wallMs).toBeLessThan(onPath);
    expect((await run(99)).lines).toEqual(first.lines);
    expect((await run(100)).lines).not.toEqual(first.lines);
  });
});
