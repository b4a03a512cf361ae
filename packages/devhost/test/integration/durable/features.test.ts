// Every durable feature of the devhost engine, driven through the real durable-functions replay on a
// virtual clock (hours of durable timers take milliseconds).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tallyTaskHub } from "../../../src/durable/hubTally";
import "../../support/durableCapture";
import { startTestEngine, T0, type TestEngine } from "../../support/durableHost";

const features = await import("../../support/apps/durableFeatures");

/** Every invocation, with the virtual time and (for episodes) the instance's status as the episode begins. */
const invocations: Array<{ name: string; at: string; instanceId?: string; statusAtStart?: string }> = [];
let h: TestEngine;

beforeAll(async () => {
  h = await startTestEngine({
    invoke: (reg, input, context) => {
      const instanceId =
        reg.kind === "orchestration" ? (input as { instanceId: string }).instanceId : undefined;
      invocations.push({
        name: reg.name,
        at: h.clock.now().toISOString(),
        instanceId,
        statusAtStart: instanceId ? h.engine.getStatus(instanceId)?.runtimeStatus : undefined,
      });
      return Promise.resolve(reg.handler(input, context));
    },
  });
});
afterAll(() => h.dispose());

const ran = (name: string): string[] => invocations.filter((i) => i.name === name).map((i) => i.at);

describe("durable timers on the virtual clock", () => {
  it("fires a timer exactly when the clock reaches it, and the code sees that time", async () => {
    const id = h.engine.startNew("F_Timer", { input: 90 * 60 * 1000 });
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)?.runtimeStatus).toBe("Running");
    await h.clock.advance(90 * 60 * 1000 - 1);
    expect(h.engine.getStatus(id)?.runtimeStatus).toBe("Running");
    const before = h.clock.now().getTime();
    await h.clock.advance(1);
    const status = h.engine.getStatus(id);
    expect(status?.runtimeStatus).toBe("Completed");
    const out = status?.output as { before: string; after: string };
    expect(Date.parse(out.after) - Date.parse(out.before)).toBe(90 * 60 * 1000);
    expect(Date.parse(out.after)).toBe(before + 1);
  });

  it("splits a ten-day timer into pieces (schema V3) and still completes at the due time", async () => {
    const id = h.engine.startNew("F_LongTimer");
    await h.engine.runUntilIdle();
    const status = h.engine.getStatus(id, { showHistory: true });
    const out = status?.output as { start: string; end: string };
    expect(Date.parse(out.end) - Date.parse(out.start)).toBe(10 * 24 * 60 * 60 * 1000);
    expect(status?.historyEvents?.filter((e) => e.EventType === "TimerFired").length).toBeGreaterThan(1);
  });
});

describe("external events", () => {
  it("buffers events raised before the orchestration waits, including before it first runs", async () => {
    const id = h.engine.startNew("F_Events");
    h.engine.raiseEvent(id, "Add", 1); // instance still Pending
    await h.engine.whenIdle();
    h.engine.raiseEvent(id, "Add", 10);
    h.engine.raiseEvent(id, "Add", 100);
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: 111 });
  });

  it("rejects events for unknown (404) and finished (410) instances", async () => {
    expect(() => h.engine.raiseEvent("no-such-instance", "Add", 1)).toThrow(
      expect.objectContaining({ status: 404 }),
    );
    const id = h.engine.startNew("F_Timer", { input: 1 });
    await h.engine.runUntilIdle();
    expect(() => h.engine.raiseEvent(id, "Add", 1)).toThrow(expect.objectContaining({ status: 410 }));
  });
});

describe("Task.all and Task.any", () => {
  it("fans in all results, then the event wins the race and the losing timer is cancelled", async () => {
    const id = h.engine.startNew("F_AllAny");
    await h.engine.whenIdle();
    expect(h.engine.pendingTimers().filter((t) => t.instanceId === id)).toHaveLength(1);
    await h.clock.advance(10 * 60 * 1000);
    h.engine.raiseEvent(id, "Go", { by: "ops" });
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({
      runtimeStatus: "Completed",
      output: { all: [1, 2, 3], winner: "event", data: { by: "ops" } },
    });
    expect(h.engine.pendingTimers().filter((t) => t.instanceId === id)).toEqual([]);
  });

  it("records a losing timer its last episode made and cancelled, as the extension does: created, never armed", async () => {
    const id = h.engine.startNew("F_AllAny");
    // Raised before the race: the episode that races it is the last one.
    h.engine.raiseEvent(id, "Go", { by: "early" });
    await h.engine.whenIdle();
    const status = h.engine.getStatus(id, { showHistory: true });
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: { winner: "event" } });
    const types = (status?.historyEvents ?? []).map((e) => e.EventType);
    expect(types.filter((t) => t === "TimerCreated")).toHaveLength(1);
    expect(types.filter((t) => t === "TimerFired")).toEqual([]);
    expect(h.engine.pendingTimers().filter((t) => t.instanceId === id)).toEqual([]);
  });

  it("lets the timer win when no event comes", async () => {
    const start = h.clock.now().getTime();
    const id = h.engine.startNew("F_AllAny");
    await h.engine.runUntilIdle();
    const out = h.engine.getStatus(id)?.output as { winner: string; at: string };
    expect(out.winner).toBe("timer");
    expect(Date.parse(out.at) - start).toBe(60 * 60 * 1000);
  });
});

describe("tallyTaskHub after the engine stops", () => {
  it("counts each losing timer cancelled, whether the last episode or an earlier one made it", async () => {
    const own = await startTestEngine();
    try {
      const early = own.engine.startNew("F_AllAny");
      own.engine.raiseEvent(early, "Go", 1);
      const late = own.engine.startNew("F_AllAny");
      await own.engine.whenIdle();
      own.engine.raiseEvent(late, "Go", 2);
      await own.engine.whenIdle();
      await own.stop();
      const tallies = tallyTaskHub(path.join(own.dataDir, own.engine.taskHubName));
      for (const id of [early, late])
        expect(
          tallies.find((t) => t.instanceId === id),
          id,
        ).toMatchObject({
          runtimeStatus: "Completed",
          events: { TimerCreated: 1 },
          cancelledTimers: 1,
        });
    } finally {
      await own.dispose();
    }
  });
});

describe("callActivityWithRetry", () => {
  it("waits first * backoff^n between attempts and fails with the last error when attempts run out", async () => {
    const key = "exhausted";
    const id = h.engine.startNew("F_RetryExhausted", { input: { key, failures: 99 } });
    const start = h.clock.now().getTime();
    const before = ran("F_Flaky").length;
    await h.engine.runUntilIdle();
    const attempts = ran("F_Flaky")
      .slice(before)
      .map((at) => Date.parse(at) - start);
    expect(attempts).toEqual([0, 1000, 3000]); // 1 s, then 2 s (backoff 2)
    const out = h.engine.getStatus(id)?.output as { caught: string; elapsedMs: number };
    expect(out.caught).toContain("flaky exhausted attempt 3");
    expect(out.elapsedMs).toBe(7000); // DTFx waits once more after the final failure
  });
});

describe("sub-orchestrations", () => {
  it("runs children with generated and explicit ids, surfaces a child failure, and retries a child", async () => {
    const id = h.engine.startNew("F_Parent", { instanceId: "parent-1" });
    await h.engine.runUntilIdle();
    const status = h.engine.getStatus(id);
    expect(status?.runtimeStatus).toBe("Completed");
    const out = status?.output as { a: unknown; b: unknown; failed: string; retried: unknown };
    expect(out.a).toEqual({ echoed: "a", parent: "parent-1" });
    expect(out.b).toEqual({ echoed: "b", parent: "parent-1" });
    expect(out.failed).toContain("child broke");
    expect(out.retried).toBe(2);
    expect(h.engine.getStatus("parent-1-fixed")?.runtimeStatus).toBe("Completed");
    expect(h.engine.getStatus("parent-1:0000")?.output).toEqual({ echoed: "a", parent: "parent-1" });
  });
});

describe("runtime status", () => {
  it("is Pending until the first episode, then Running", async () => {
    const id = h.engine.startNew("F_WaitForever");
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Pending", input: null, output: null });
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)?.runtimeStatus).toBe("Running");
    h.engine.terminate(id, "done with it");
    await h.engine.whenIdle();
  });
});

describe("activity dispatch", () => {
  it("runs activities concurrently, at most 16 at a time", async () => {
    const id = h.engine.startNew("F_FanOutSlow", { input: 40 });
    const status = await h.engine.waitForCompletion(id);
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: (39 * 40) / 2 });
    expect(features.concurrency.max).toBe(16);
  });
});

describe("continueAsNew", () => {
  it("restarts with the new input and a fresh history until the orchestration returns", async () => {
    const id = h.engine.startNew("F_Loop", { input: 0 });
    await h.engine.whenIdle();
    await h.clock.advance(60 * 1000);
    expect(h.engine.getStatus(id)?.input).toBe(1);
    await h.engine.runUntilIdle();
    const status = h.engine.getStatus(id, { showHistory: true });
    expect(status).toMatchObject({
      runtimeStatus: "Completed",
      output: "finished after 3 restarts",
      input: 3,
    });
    expect(status?.historyEvents?.filter((e) => e.EventType === "ExecutionStarted")).toHaveLength(1);
    const seen = invocations.filter((i) => i.instanceId === id).map((i) => i.statusAtStart);
    expect(seen.filter((s) => s === "ContinuedAsNew")).toHaveLength(3);
    expect(seen[0]).toBe("Pending");
  });
});

describe("custom status", () => {
  it("reports each stage the orchestration sets", async () => {
    const id = h.engine.startNew("F_CustomStatus");
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)?.customStatus).toEqual({ stage: "waiting for approval" });
    h.engine.raiseEvent(id, "Approve", "alice");
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({
      runtimeStatus: "Completed",
      customStatus: { stage: "approved", by: "alice" },
    });
  });
});

describe("determinism and failures", () => {
  it("fails an instance whose replay diverges, naming the instance, the position and both actions", async () => {
    const id = h.engine.startNew("F_NonDeterministic", { instanceId: "nd-1" });
    await h.engine.whenIdle();
    const status = h.engine.getStatus(id);
    expect(status?.runtimeStatus).toBe("Failed");
    const message = String(status?.output);
    expect(message).toContain("Non-deterministic orchestration");
    expect(message).toContain("instance 'nd-1'");
    expect(message).toContain("action #0");
    expect(message).toContain(`the history records CallActivity 'F_Echo', input "first run"`);
    expect(message).toContain(`the code now produced CallActivity 'F_Echo', input "replay"`);
  });

  it("keeps newGuid and currentUtcDateTime stable across replays", async () => {
    const id = h.engine.startNew("F_Deterministic");
    await h.engine.whenIdle();
    const out = h.engine.getStatus(id)?.output as {
      guid: string;
      echoed: string;
      t1: string;
      replayingAtEnd: boolean;
    };
    expect(out.echoed).toBe(out.guid);
    expect(out.t1).toBe(h.engine.getStatus(id)?.createdTime);
    expect(out.replayingAtEnd).toBe(false);
  });

  it("fails on an orchestrator exception and on an unhandled activity failure, with the message", async () => {
    const a = h.engine.startNew("F_Throws");
    const b = h.engine.startNew("F_ActivityFails");
    await h.engine.whenIdle();
    expect(h.engine.getStatus(a)?.runtimeStatus).toBe("Failed");
    expect(String(h.engine.getStatus(a)?.output)).toContain("orchestrator exploded");
    expect(h.engine.getStatus(b)?.runtimeStatus).toBe("Failed");
    expect(String(h.engine.getStatus(b)?.output)).toContain("activity exploded");
  });
});

describe("entities", () => {
  it("signals, calls, reports an operation that throws, and forwards signals between entities", async () => {
    const id = h.engine.startNew("F_Bank");
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({
      runtimeStatus: "Completed",
      output: { balance: 70, refused: "refused" },
    });
    expect(h.engine.readEntityState({ name: "F_Account", key: "savings" })).toEqual({
      exists: true,
      state: 5,
    });
    h.engine.signalEntity({ name: "F_Account", key: "savings" }, "delete");
    await h.engine.whenIdle();
    expect(h.engine.readEntityState({ name: "F_Account", key: "savings" }).exists).toBe(false);
  });
});

describe("terminate", () => {
  it("terminates a waiting instance with the reason as output, after which events are refused", async () => {
    const id = h.engine.startNew("F_WaitForever");
    await h.engine.whenIdle();
    h.engine.terminate(id, "operator said so");
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Terminated", output: "operator said so" });
    expect(() => h.engine.terminate(id, "again")).toThrow(expect.objectContaining({ status: 410 }));
  });
});

it("starts on the virtual clock's time", () => {
  expect(Date.parse(h.engine.list({ top: 1 }).instances[0]?.createdTime ?? "")).toBeGreaterThanOrEqual(
    T0.getTime(),
  );
});
