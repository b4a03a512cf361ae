import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseCliArgs } from "../../src/cli";
import { QueuePoller } from "../../src/latency/backoff";
import { LatencyModel, scaleGroup } from "../../src/latency/delays";
import { chooseLatency } from "../../src/latency/options";
import { LATENCY_PROFILES, type LatencyProfile } from "../../src/latency/profiles";
import { mulberry32, RandomStreams } from "../../src/latency/random";
import { readHostConfig } from "../../src/settings";

const draws = (next: () => number, n: number): number[] => Array.from({ length: n }, () => next());

/** A poller whose increments are not randomized, so that its polls can be computed by hand. */
function exactPoller(maxIntervalMs = 30_000, startAt = 0): QueuePoller {
  const rng = new RandomStreams(1).stream("unused");
  return new QueuePoller({ minIntervalMs: 50, maxIntervalMs, randomization: 0, rng, startAt });
}

/** The times of an idle poller's polls, from its start: each found by a message visible just after the last. */
function pollTimes(make: () => QueuePoller, count: number): number[] {
  const times = [0];
  while (times.length < count) times.push(make().find((times.at(-1) as number) + 0.001).at);
  return times;
}

describe("latency: seeded randomness", () => {
  it("replays the same sequence for the same seed and another for another seed", () => {
    expect(draws(mulberry32(42), 5)).toEqual(draws(mulberry32(42), 5));
    expect(draws(mulberry32(42), 5)).not.toEqual(draws(mulberry32(43), 5));
    for (const x of draws(mulberry32(7), 1000)) expect(x >= 0 && x < 1).toBe(true);
  });

  it("keeps each named stream independent of the others", () => {
    const a = new RandomStreams(9);
    const b = new RandomStreams(9);
    draws(() => a.stream("noise").next(), 10);
    expect(draws(() => a.stream("hop").next(), 5)).toEqual(draws(() => b.stream("hop").next(), 5));
    expect(draws(() => b.stream("other").next(), 5)).not.toEqual(draws(() => b.stream("hop").next(), 5));
  });

  it("draws whole milliseconds within the range, both ends included", () => {
    const rng = new RandomStreams(3).stream("range");
    const seen = new Set(draws(() => rng.between([10, 12]), 500));
    expect([...seen].sort()).toEqual([10, 11, 12]);
    expect(new Set(draws(() => rng.between([5, 5]), 20))).toEqual(new Set([5]));
  });
});

describe("latency: queue polling back-off (the Azure Storage provider's)", () => {
  it("waits longer after each empty poll, the increment doubling, up to maxQueuePollingInterval", () => {
    const times = pollTimes(() => exactPoller(5_000), 12);
    const waits = times.slice(1).map((t, i) => t - (times[i] as number));
    // A started poller polls twice at once, then waits 50 ms, then 50 ms plus 50, 100, 200, ... ms.
    expect(waits.slice(0, 8)).toEqual([50, 100, 150, 250, 450, 850, 1650, 3250]);
    expect(waits.slice(8)).toEqual([5000, 5000, 5000]);
  });

  it("randomizes each increment by at most 20 % either way", () => {
    const times = pollTimes(
      () =>
        new QueuePoller({
          minIntervalMs: 50,
          maxIntervalMs: 30_000,
          randomization: 0.2,
          rng: new RandomStreams(11).stream("poll"),
          startAt: 0,
        }),
      10,
    );
    const waits = times.slice(1).map((t, i) => t - (times[i] as number));
    waits.slice(1).forEach((wait, k) => {
      const factor = (wait - 50) / (50 * 2 ** k);
      expect(factor).toBeGreaterThanOrEqual(0.8);
      expect(factor).toBeLessThanOrEqual(1.2);
    });
  });

  it("makes a message on an idle queue wait up to the current back-off, and resets once one is found", () => {
    const poller = exactPoller(30_000);
    // After 2 minutes of idling the back-off is at its maximum: the message waits for the next poll.
    const idle = poller.find(120_000);
    expect(idle.backoffMs).toBe(30_000);
    expect(idle.at).toBeGreaterThanOrEqual(120_000);
    expect(idle.at - 120_000).toBeLessThanOrEqual(30_000);
    // Found: the poller polls again at once, then waits 50 ms: the next message is found within 50 ms.
    const next = poller.find(idle.at + 1);
    expect(next).toEqual({ at: idle.at + 50, backoffMs: 50 });
    // Then 50 ms, then 100 ms; a message visible before a pending poll is found by that same poll.
    const third = poller.find(idle.at + 120);
    expect(third).toEqual({ at: idle.at + 200, backoffMs: 100 });
    expect(poller.find(idle.at + 130).at).toBe(idle.at + 200);
  });

  it("starts afresh after a restart (a new instance)", () => {
    const poller = exactPoller(30_000);
    poller.find(300_000);
    poller.restart(400_000);
    expect(poller.find(400_000).at).toBe(400_000);
    expect(poller.find(400_010).at).toBe(400_050);
  });
});

const quiet: Pick<LatencyProfile, "serviceBusDeliveryMs"> = { serviceBusDeliveryMs: [0, 0] };

describe("latency: the delays of a run", () => {
  it("gives each hop a delay within the profile's figures", () => {
    const storage = LATENCY_PROFILES["azure-storage"];
    const model = new LatencyModel({ profile: { ...storage, coldStart: undefined }, seed: 5, startAt: 0 });
    let now = 0;
    for (const hop of [
      "orchestrationStart",
      "activityScheduled",
      "activityCompleted",
      "externalEvent",
    ] as const) {
      const ms = model.durableHop(hop, "instance-1", now);
      expect(ms).toBeGreaterThanOrEqual(20);
      expect(ms).toBeLessThanOrEqual(100 + 30_000);
      now += ms + 5;
    }
    for (let i = 0; i < 20; i++) {
      const ms = model.serviceBusDelivery("work");
      expect(ms).toBeGreaterThanOrEqual(10);
      expect(ms).toBeLessThanOrEqual(50);
    }
    const dts = new LatencyModel({
      profile: { ...LATENCY_PROFILES["durable-task-scheduler"], coldStart: undefined },
      seed: 5,
      startAt: 0,
    });
    for (let i = 0; i < 20; i++) {
      const ms = dts.durableHop(i % 2 ? "activityScheduled" : "timerFired", "instance-1", i * 1000);
      expect(ms).toBeGreaterThanOrEqual(5);
      expect(ms).toBeLessThanOrEqual(30);
    }
  });

  it("makes a message after a long idle stretch wait for the grown back-off, and the next one little", () => {
    const profile = { ...LATENCY_PROFILES["azure-storage"], coldStart: undefined };
    const model = new LatencyModel({ profile, seed: 1, startAt: 0, maxQueuePollingIntervalMs: 10_000 });
    const afterIdle = model.durableHop("externalEvent", "i", 600_000);
    const busy = model.durableHop("externalEvent", "i", 600_000 + afterIdle + 1);
    expect(afterIdle).toBeLessThanOrEqual(100 + 10_000);
    expect(busy).toBeLessThanOrEqual(100 + 50 * 1.2 + 50);
  });

  it("replays the same delays for the same seed and the same times", () => {
    const run = (seed: number): number[] => {
      const model = new LatencyModel({ profile: LATENCY_PROFILES["azure-storage"], seed, startAt: 0 });
      const out = [model.coldStart("http", 0), model.serviceBusDelivery("work")];
      for (let t = 0; t < 10; t++) out.push(model.durableHop("activityCompleted", `i${t % 3}`, t * 7_000));
      return out;
    };
    expect(run(1234)).toEqual(run(1234));
    expect(run(1234)).not.toEqual(run(4321));
  });

  it("pays a group's cold start once, then again only after it has been idle longer than the threshold", () => {
    const profile: LatencyProfile = {
      ...quiet,
      name: "test",
      durable: { kind: "push", orchestratorMessageMs: [0, 0], activityWorkItemMs: [0, 0] },
      coldStart: { idleAfterMs: 1_000, httpMs: [100, 200], triggerMs: [300, 400] },
    };
    const lines: string[] = [];
    const model = new LatencyModel({ profile, seed: 2, startAt: 0, log: (l) => lines.push(l) });
    const first = model.coldStart("http", 0);
    expect(first).toBeGreaterThanOrEqual(100);
    expect(first).toBeLessThanOrEqual(200);
    // A second request while the instance starts waits for the same instance.
    expect(model.coldStart("http", 50)).toBe(first - 50);
    model.active("http", first);
    model.active("http", first + 10);
    expect(model.coldStart("http", first + 900)).toBe(0);
    model.active("http", first + 900);
    expect(model.coldStart("http", first + 1_800)).toBe(0);
    const again = model.coldStart("http", first + 900 + 1_001);
    expect(again).toBeGreaterThanOrEqual(100);
    // Other groups are on their own: the durable group's first hop pays its own (non-HTTP) cold start.
    const durable = model.durableHop("orchestrationStart", "i", 0);
    expect(durable).toBeGreaterThanOrEqual(300);
    expect(durable).toBeLessThanOrEqual(400);
    expect(model.durableHop("activityScheduled", "i", durable)).toBe(0);
    expect(lines.filter((l) => l.startsWith("Latency: coldStart"))).toHaveLength(3);
  });

  it("groups functions as Flex Consumption scales them", () => {
    expect(scaleGroup("api", "httpTrigger")).toBe("http");
    expect(scaleGroup("flow", "orchestrationTrigger")).toBe("durable");
    expect(scaleGroup("step", "activityTrigger")).toBe("durable");
    expect(scaleGroup("counter", "entityTrigger")).toBe("durable");
    expect(scaleGroup("work", "serviceBusTrigger")).toBe("function:work");
    expect(scaleGroup("tick", "timerTrigger")).toBe("function:tick");
  });
});

describe("latency: options and settings", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("takes the option, else the setting, else none; the seed likewise, else a random one", () => {
    expect(chooseLatency({}, {})).toBeUndefined();
    expect(chooseLatency({}, { DEVHOST_LATENCY_PROFILE: "none" })).toBeUndefined();
    const fromSetting = chooseLatency(
      {},
      { DEVHOST_LATENCY_PROFILE: "azure-storage", DEVHOST_LATENCY_SEED: "77" },
    );
    expect(fromSetting).toMatchObject({ profile: { name: "azure-storage" }, seed: 77, seedFrom: "setting" });
    const fromOption = chooseLatency(
      { latencyProfile: "durable-task-scheduler", latencySeed: 5 },
      { DEVHOST_LATENCY_PROFILE: "azure-storage", DEVHOST_LATENCY_SEED: "77" },
    );
    expect(fromOption).toMatchObject({
      profile: { name: "durable-task-scheduler" },
      seed: 5,
      seedFrom: "option",
    });
    expect(
      chooseLatency({ latencyProfile: "none" }, { DEVHOST_LATENCY_PROFILE: "azure-storage" }),
    ).toBeUndefined();
    expect(chooseLatency({ latencyProfile: "azure-storage" }, {})?.seedFrom).toBe("random");
  });

  it("refuses a bad value, naming the setting and what it allows", () => {
    expect(() => chooseLatency({}, { DEVHOST_LATENCY_PROFILE: "fast" })).toThrow(
      'DEVHOST_LATENCY_PROFILE: "fast" is not a latency profile; allowed: none, azure-storage, durable-task-scheduler.',
    );
    expect(() =>
      chooseLatency({}, { DEVHOST_LATENCY_PROFILE: "azure-storage", DEVHOST_LATENCY_SEED: "-1" }),
    ).toThrow('DEVHOST_LATENCY_SEED: "-1" is not a seed; allowed: an integer from 0 to 4294967295.');
    expect(() => chooseLatency({ latencyProfile: "azure-storage", latencySeed: 1.5 }, {})).toThrow(
      /latencySeed/,
    );
    const broken = { ...LATENCY_PROFILES["azure-storage"], serviceBusDeliveryMs: [50, 10] as const };
    expect(() => chooseLatency({ latencyProfile: broken }, {})).toThrow(
      /latencyProfile: the profile is invalid: serviceBusDeliveryMs: min must not exceed max/,
    );
  });

  it("reads --latency-profile and --latency-seed, and refuses bad ones", () => {
    expect(parseCliArgs(["--latency-profile", "azure-storage", "--latency-seed", "9"])).toMatchObject({
      latencyProfile: "azure-storage",
      latencySeed: 9,
    });
    expect(() => parseCliArgs(["--latency-profile", "slow"])).toThrow(
      '--latency-profile: "slow" is not a latency profile; allowed: none, azure-storage, durable-task-scheduler.',
    );
    expect(() => parseCliArgs(["--latency-seed", "x"])).toThrow(/--latency-seed: "x" is not a seed/);
  });

  it("reads maxQueuePollingInterval and partitionCount from host.json", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-latency-"));
    dirs.push(dir);
    fs.writeFileSync(
      path.join(dir, "host.json"),
      JSON.stringify({
        version: "2.0",
        extensions: {
          durableTask: { storageProvider: { maxQueuePollingInterval: "00:00:05", partitionCount: 2 } },
        },
      }),
    );
    expect(readHostConfig(dir).durableTask).toMatchObject({
      maxQueuePollingIntervalMs: 5_000,
      partitionCount: 2,
    });
  });
});
