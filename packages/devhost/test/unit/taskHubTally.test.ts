// tallyTaskHub: a stopped hub's orchestrations counted by history event type, as a benchmark reads them after
// the app's process has exited.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tallyTaskHub } from "../../src/durable/hubTally";
import { EventType, newEvent, type EventTypeCode } from "../../src/durable/history";
import { TaskHubStore, type InstanceRecord } from "../../src/durable/store";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const hubDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hub-tally-"));
  dirs.push(dir);
  return dir;
};

const at = new Date("2026-01-01T00:00:00Z");
const record = (id: string, history: EventTypeCode[], cancelledTimers: number[] = []): InstanceRecord => ({
  instanceId: id,
  name: "scheduler",
  executionId: "e1",
  runtimeStatus: "Completed",
  createdTime: at.toISOString(),
  lastUpdatedTime: at.toISOString(),
  history: history.map((type) => newEvent(type, at)),
  inbox: [],
  prevActions: [],
  signalsSent: 0,
  cancelledTimers,
});

describe("tallyTaskHub", () => {
  it("counts each instance's history events by type name, and its cancelled timers", () => {
    const dir = hubDir();
    const store = TaskHubStore.open(dir);
    const started: EventTypeCode = EventType.OrchestratorStarted;
    const completed: EventTypeCode = EventType.OrchestratorCompleted;
    store.commit([
      {
        k: "putInstance",
        r: record(
          "A:1",
          [
            ...[started, EventType.ExecutionStarted, EventType.TaskScheduled, completed],
            ...[started, EventType.TaskCompleted, EventType.TimerCreated, completed],
            ...[started, EventType.EventRaised, EventType.TaskScheduled, completed],
          ],
          [3],
        ),
      },
      { k: "putInstance", r: record("B:1", [started, EventType.ExecutionStarted, completed]) },
    ]);
    store.close();

    const tallies = tallyTaskHub(dir);
    expect(tallies.find((t) => t.instanceId === "A:1")).toEqual({
      instanceId: "A:1",
      name: "scheduler",
      runtimeStatus: "Completed",
      events: {
        OrchestratorStarted: 3,
        OrchestratorCompleted: 3,
        ExecutionStarted: 1,
        TaskScheduled: 2,
        TaskCompleted: 1,
        TimerCreated: 1,
        EventRaised: 1,
      },
      cancelledTimers: 1,
    });
    expect(tallies.find((t) => t.instanceId === "B:1")?.events).toEqual({
      OrchestratorStarted: 1,
      ExecutionStarted: 1,
      OrchestratorCompleted: 1,
    });
  });

  it("reads what the journal added after a snapshot, and leaves the hub openable again", () => {
    const dir = hubDir();
    const store = TaskHubStore.open(dir);
    store.commit([{ k: "putInstance", r: record("A:1", [EventType.OrchestratorStarted]) }]);
    store.compact();
    store.commit([{ k: "patchInstance", id: "A:1", append: [newEvent(EventType.TaskScheduled, at)] }]);
    store.close();

    expect(tallyTaskHub(dir)[0]?.events).toEqual({ OrchestratorStarted: 1, TaskScheduled: 1 });
    // The tally released the lock: an engine (here the store itself) can open the hub after it.
    TaskHubStore.open(dir).close();
  });

  it("refuses a directory that holds no hub rather than creating one", () => {
    const missing = path.join(hubDir(), "no-such-hub");
    expect(() => tallyTaskHub(missing)).toThrow(/no task hub/);
    expect(fs.existsSync(missing)).toBe(false);
  });
});
