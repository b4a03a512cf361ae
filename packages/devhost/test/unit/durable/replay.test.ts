// Recorded-history tests of the replay (in the manner of durable-functions' own replay tests): a history as
// the engine stores it (played events, then the episode's OrchestratorStarted and messages) is fed through
// the engine's episode path (replay.ts: runEpisode, then findNewTasks / cancelledTimerIds over the SDK's
// open tasks) to a real durable-functions orchestrator, and the actions it produces are checked. No engine,
// no task hub, no clock: the replay is a function of (history, orchestrator).
import type { InvocationContext } from "@azure/functions";
import { describe, expect, it } from "vitest";
import { functionContext } from "../../../src/durable/engine";
import {
  ActionType,
  EventType,
  flattenActions,
  newEvent,
  toJson,
  type HistoryEvent,
} from "../../../src/durable/history";
import {
  cancelledTimerIds,
  DEFAULT_REPLAY_SCHEMA,
  findNewTasks,
  runEpisode,
  scheduledIds,
  type EpisodeOutcome,
} from "../../../src/durable/replay";
import type { DurableFunctionRegistration } from "../../../src/durable/types";
import { capturedFunction } from "../../support/durableCapture";

// durable-functions is loaded after the capture hook is installed (the import above), so that
// df.app.orchestration really registers.
const df = await import("durable-functions");

const T0 = new Date("2024-01-01T00:00:00.000Z");
const at = (minutes: number): Date => new Date(T0.getTime() + minutes * 60_000);
const HOUR_LATER = at(60).toISOString();

df.app.orchestration("Replay_Chain", function* (context) {
  const a: unknown = yield context.df.callActivity("Replay_A", context.df.getInput());
  const b: unknown = yield context.df.callActivity("Replay_B", a);
  return b;
});

df.app.orchestration("Replay_Timer", function* (context) {
  yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60 * 60_000));
  return yield context.df.callActivity("Replay_AfterTimer", "woke");
});

df.app.orchestration("Replay_Race", function* (context) {
  const approval = context.df.waitForExternalEvent("Approval");
  const deadline = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60 * 60_000));
  const winner: unknown = yield context.df.Task.any([approval, deadline]);
  if (winner === approval) {
    deadline.cancel();
    return yield context.df.callActivity("Replay_Approved", approval.result);
  }
  return "timed out";
});

/** The registration the engine would hold for a captured orchestrator. */
function registration(name: string): DurableFunctionRegistration {
  return { name, kind: "orchestration", handler: capturedFunction(name).handler };
}

const started = (name: string, input: unknown, t = T0): HistoryEvent[] => [
  newEvent(EventType.OrchestratorStarted, t),
  newEvent(EventType.ExecutionStarted, t, { Name: name, Input: toJson(input) }),
];
const scheduled = (id: number, name: string, input: unknown, t: Date): HistoryEvent =>
  newEvent(EventType.TaskScheduled, t, { EventId: id, Name: name, Input: toJson(input) });
const completed = (id: number, result: unknown, t: Date): HistoryEvent =>
  newEvent(EventType.TaskCompleted, t, { TaskScheduledId: id, Result: toJson(result) });
const timerCreated = (id: number, fireAt: string, t: Date): HistoryEvent =>
  newEvent(EventType.TimerCreated, t, { EventId: id, FireAt: fireAt });
const timerFired = (id: number, fireAt: string): HistoryEvent =>
  newEvent(EventType.TimerFired, new Date(fireAt), { TimerId: id, FireAt: fireAt });
const raised = (name: string, data: unknown, t: Date): HistoryEvent =>
  newEvent(EventType.EventRaised, t, { Name: name, Input: toJson(data) });
const episodeEnd = (t: Date): HistoryEvent => newEvent(EventType.OrchestratorCompleted, t);

/**
 * One episode as the orchestration runner plays it: the recorded history marked played, then this episode's
 * OrchestratorStarted and messages. Returns the SDK's state, the new work it opened (by the engine's own
 * reading) and the timers it cancelled.
 */
async function replay(
  name: string,
  input: unknown,
  recorded: HistoryEvent[],
  episode: HistoryEvent[],
): Promise<Extract<EpisodeOutcome, { kind: "ok" }> & ReturnType<typeof readWork>> {
  const reg = registration(name);
  const outcome = await runEpisode({
    instanceId: `replay-${name}`,
    input,
    history: [...recorded.map((e) => ({ ...e, IsPlayed: true })), ...episode],
    schemaVersion: DEFAULT_REPLAY_SCHEMA,
    httpPollIntervalMs: 30_000,
    context: functionContext(reg, () => {}),
    call: (payload, context: InvocationContext) => Promise.resolve(reg.handler(payload, context)),
  });
  if (outcome.kind !== "ok")
    throw new Error(`replay of ${name} did not complete: ${JSON.stringify(outcome)}`);
  return { ...outcome, ...readWork(outcome, recorded) };
}

function readWork(outcome: Extract<EpisodeOutcome, { kind: "ok" }>, recorded: HistoryEvent[]) {
  return {
    newTasks: findNewTasks(outcome.openTasks, scheduledIds(recorded)),
    cancelledTimers: cancelledTimerIds(outcome.openTasks),
    actions: flattenActions(outcome.state.actions),
  };
}

describe("replay of a recorded history", () => {
  it("first episode: the orchestrator's first action is emitted as new work", async () => {
    const r = await replay("Replay_Chain", "in", [], started("Replay_Chain", "in"));
    // (The SDK's actions carry a string input as JSON text, an object one as the object.)
    expect(r.state.isDone).toBe(false);
    expect(r.actions.map((a) => [a.actionType, a.functionName])).toEqual([
      [ActionType.CallActivity, "Replay_A"],
    ]);
    expect(r.newTasks).toEqual([
      { id: 0, kind: "activity", action: expect.objectContaining({ input: toJson("in") }) },
    ]);
  });

  it("a completed activity is not scheduled again; the next action after the last recorded event is new", async () => {
    const recorded = [...started("Replay_Chain", "in"), scheduled(0, "Replay_A", "in", T0), episodeEnd(T0)];
    const r = await replay("Replay_Chain", "in", recorded, [
      newEvent(EventType.OrchestratorStarted, at(1)),
      completed(0, "from A", at(1)),
    ]);
    expect(r.state.isDone).toBe(false);
    // The SDK still reports both calls (the action list is replayed whole) ...
    expect(r.actions.map((a) => a.functionName)).toEqual(["Replay_A", "Replay_B"]);
    // ... but only B, fed with A's recorded result, is new work: A is never scheduled again.
    expect(r.newTasks).toHaveLength(1);
    expect(r.newTasks[0]).toMatchObject({
      id: 1,
      kind: "activity",
      action: { functionName: "Replay_B", input: toJson("from A") },
    });
  });

  it("a fully answered history completes with the recorded results, scheduling nothing", async () => {
    const recorded = [
      ...started("Replay_Chain", "in"),
      scheduled(0, "Replay_A", "in", T0),
      episodeEnd(T0),
      newEvent(EventType.OrchestratorStarted, at(1)),
      completed(0, "from A", at(1)),
      scheduled(1, "Replay_B", "from A", at(1)),
      episodeEnd(at(1)),
    ];
    const r = await replay("Replay_Chain", "in", recorded, [
      newEvent(EventType.OrchestratorStarted, at(2)),
      completed(1, "from B", at(2)),
    ]);
    expect(r.state.isDone).toBe(true);
    expect(r.state.output).toBe("from B");
    expect(r.newTasks).toEqual([]);
  });

  it("a timer that has not fired keeps the orchestrator waiting", async () => {
    const recorded = [...started("Replay_Timer", null), timerCreated(0, HOUR_LATER, T0), episodeEnd(T0)];
    // An episode with no answer for the timer (an unrelated event nobody waits for).
    const r = await replay("Replay_Timer", null, recorded, [
      newEvent(EventType.OrchestratorStarted, at(30)),
      raised("Nobody", 1, at(30)),
    ]);
    expect(r.state.isDone).toBe(false);
    expect(r.actions.map((a) => a.actionType)).toEqual([ActionType.CreateTimer]);
    expect(r.newTasks).toEqual([]);
  });

  it("a fired timer resumes the orchestrator, which emits its next action", async () => {
    const first = await replay("Replay_Timer", null, [], started("Replay_Timer", null));
    // The timer the first episode opens is the one recorded below.
    expect(first.newTasks).toEqual([
      { id: 0, kind: "timer", fireAt: new Date(HOUR_LATER), cancelled: false },
    ]);

    const recorded = [...started("Replay_Timer", null), timerCreated(0, HOUR_LATER, T0), episodeEnd(T0)];
    const r = await replay("Replay_Timer", null, recorded, [
      newEvent(EventType.OrchestratorStarted, at(60)),
      timerFired(0, HOUR_LATER),
    ]);
    expect(r.state.isDone).toBe(false);
    expect(r.newTasks).toHaveLength(1);
    expect(r.newTasks[0]).toMatchObject({
      id: 1,
      kind: "activity",
      action: { functionName: "Replay_AfterTimer", input: toJson("woke") },
    });
    expect(r.cancelledTimers).toEqual([]);
  });

  it("a raised event wins a Task.any race against a timer, and the timer is then cancelled", async () => {
    const first = await replay("Replay_Race", null, [], started("Replay_Race", null));
    expect(first.newTasks).toEqual([
      { id: 0, kind: "timer", fireAt: new Date(HOUR_LATER), cancelled: false },
    ]);

    const recorded = [...started("Replay_Race", null), timerCreated(0, HOUR_LATER, T0), episodeEnd(T0)];
    const r = await replay("Replay_Race", null, recorded, [
      newEvent(EventType.OrchestratorStarted, at(10)),
      raised("Approval", { by: "ops" }, at(10)),
    ]);
    expect(r.state.isDone).toBe(false);
    // The timer the engine armed is now cancelled (the engine disarms it) ...
    expect(r.cancelledTimers).toEqual([0]);
    const timer = r.actions.find((a) => a.actionType === ActionType.CreateTimer);
    expect(timer?.isCanceled).toBe(true);
    // ... and the winner's branch runs on with the event's data.
    expect(r.newTasks).toHaveLength(1);
    expect(r.newTasks[0]).toMatchObject({
      id: 1,
      kind: "activity",
      action: { functionName: "Replay_Approved", input: { by: "ops" } },
    });
  });

  it("the timer wins the same race when it fires first, and the late branch is not taken", async () => {
    const recorded = [...started("Replay_Race", null), timerCreated(0, HOUR_LATER, T0), episodeEnd(T0)];
    const r = await replay("Replay_Race", null, recorded, [
      newEvent(EventType.OrchestratorStarted, at(60)),
      timerFired(0, HOUR_LATER),
    ]);
    expect(r.state.isDone).toBe(true);
    expect(r.state.output).toBe("timed out");
    expect(r.newTasks).toEqual([]);
    expect(r.cancelledTimers).toEqual([]);
  });
});
