/**
 * The Scheduler orchestration (src/scheduler/orchestration.ts) through the real durable-functions replay on the
 * devhost, on a virtual clock, with stub activities: how an attempt ends (finished, fenced, timed out, stopped),
 * which event ends a wait, how the one timer of an attempt follows its steps, and what the activity retries do,
 * each in milliseconds of real time however far ahead the deadline is. Answers come as the reply path tells them
 * (only the move that ends the attempt's dispatches is raised), and as builds before it raised them (the recorded
 * move as the step's own event, or the reply itself, which the orchestration records through its activity):
 * in-flight histories hold those. The activities themselves are tested against the emulators and in the e2e tests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACTIVITY_RETRY,
  ACTIVITY_RETRY_INTERVALS_MS,
  ATTEMPT_ENDED_EVENT,
  MAX_ORCHESTRATION_TURNS,
  replyEventName,
  type StepKind,
} from "../../../src/domain";
import type { AfterReply } from "../../../src/scheduler/activities";
import type { SchedulerResult } from "../../../src/scheduler/orchestration";
import {
  CONTINUE,
  dispatched,
  dispatchFinished,
  inOrder,
  okReply,
  REPORTED,
  startSchedulerHarness,
  type SchedulerHarness,
} from "../../support/schedulerHarness";

const MINUTE = 60_000;
const WEEK = 7 * 24 * 60 * MINUTE;

let h: SchedulerHarness;
beforeAll(async () => {
  h = await startSchedulerHarness();
});
afterAll(() => h?.stop());

/** A time `ms` after the clock's current time (the clock is shared by the file's tests and only moves on). */
const fromNow = (ms: number): Date => new Date(h.clock.now().getTime() + ms);

const events = (instanceId: string, type: string) =>
  (h.status(instanceId).historyEvents ?? []).filter((e) => e.EventType === type);

const timersOf = (instanceId: string) =>
  h.engine
    .pendingTimers()
    .filter((t) => t.instanceId === instanceId)
    .map((t) => t.fireAt.toISOString());

it("races one timer for the whole attempt: a step that goes on raises nothing, the end wins and cancels it", async () => {
  const step0By = fromNow(MINUTE);
  const step1By = fromNow(60 * MINUTE);
  const id = await h.start("RECORDED", { schedulerDispatchNext: inOrder(dispatched(0, "do", step0By)) });
  await h.deliverRecorded(okReply(id, 0, "do"), dispatched(1, "do", step1By));
  // Nothing was raised: the orchestration still races its timer at step 0's completeBy, which stands for step 1.
  expect(events(id, "EventRaised")).toEqual([]);
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Running",
    customStatus: { stepIndex: 0, direction: "do", completeBy: step0By.toISOString() },
  });
  expect(timersOf(id)).toEqual([step0By.toISOString()]);
  await h.deliverRecorded(okReply(id, 1, "do"), dispatchFinished("Processed"));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
  });
  // The one activity is the first dispatch (the starter makes it with the claim in this build).
  expect(h.calls("RECORDED").map((c) => c.name)).toEqual(["schedulerDispatchNext"]);
  expect(events(id, "EventRaised").map((e) => e.Name)).toEqual([ATTEMPT_ENDED_EVENT]);
  expect(events(id, "TimerCreated")).toHaveLength(1);
  expect(events(id, "TimerFired")).toEqual([]);
  expect(timersOf(id)).toEqual([]);
});

it("arms the timer again at the step in progress when an earlier step's completeBy passes", async () => {
  const step0By = fromNow(MINUTE);
  const step1By = fromNow(2 * MINUTE);
  const id = await h.start("CROSSED", {
    schedulerDispatchNext: inOrder(dispatched(0, "do", step0By)),
    // The deadline activity finds step 0 answered, and takes the move the reply path dispatched.
    schedulerReportDeadline: inOrder(dispatched(1, "do", step1By)),
  });
  await h.deliverRecorded(okReply(id, 0, "do"), dispatched(1, "do", step1By));
  await h.clock.advanceTo(step0By);
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Running",
    customStatus: { stepIndex: 1, direction: "do", completeBy: step1By.toISOString() },
  });
  expect(timersOf(id)).toEqual([step1By.toISOString()]);
  await h.deliverRecorded(okReply(id, 1, "do"), dispatchFinished("Processed"));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
  });
  expect(h.calls("CROSSED").map((c) => c.name)).toEqual(["schedulerDispatchNext", "schedulerReportDeadline"]);
  expect(timersOf(id)).toEqual([]);
});

it("takes the end raised while the deadline activity ran, without racing a timer again", async () => {
  const step0By = fromNow(MINUTE);
  const step1By = fromNow(2 * MINUTE);
  let id = "";
  id = await h.start("ENDED-MEANWHILE", {
    schedulerDispatchNext: inOrder(dispatched(0, "do", step0By)),
    // The activity read the record before the last answer was recorded; the end is raised before it returns.
    schedulerReportDeadline: () => {
      const ended = { requestId: okReply(id, 1, "do").requestId, recorded: dispatchFinished("Processed") };
      h.engine.raiseEvent(id, ATTEMPT_ENDED_EVENT, ended);
      return dispatched(1, "do", step1By);
    },
  });
  await h.clock.advanceTo(step0By);
  await h.engine.whenIdle();
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
  });
  expect(events(id, "TimerCreated")).toHaveLength(1);
  expect(timersOf(id)).toEqual([]);
});

it("takes each move as the builds before raised it, one event per step, and cancels each step's deadline", async () => {
  const step0By = fromNow(MINUTE);
  const step1By = fromNow(60 * MINUTE);
  const id = await h.start("STEP-EVENTS", { schedulerDispatchNext: inOrder(dispatched(0, "do", step0By)) });
  await h.deliverAsStepEvent(okReply(id, 0, "do"), dispatched(1, "do", step1By));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Running",
    customStatus: { stepIndex: 1, direction: "do", completeBy: step1By.toISOString() },
  });
  expect(timersOf(id)).toEqual([step1By.toISOString()]);
  await h.deliverAsStepEvent(okReply(id, 1, "do"), dispatchFinished("Processed"));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
  });
  expect(h.calls("STEP-EVENTS").map((c) => c.name)).toEqual(["schedulerDispatchNext"]);
  expect(events(id, "TimerCreated")).toHaveLength(2);
  expect(events(id, "TimerFired")).toEqual([]);
  expect(timersOf(id)).toEqual([]);
});

it("times out as before when a deadline activity of an earlier build returned nothing", async () => {
  const completeBy = fromNow(MINUTE);
  const id = await h.start("EARLIER-DEADLINE", {
    schedulerDispatchNext: inOrder(dispatched(0, "do", completeBy)),
    schedulerReportDeadline: () => undefined as never,
  });
  await h.clock.advanceTo(completeBy);
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "timedOut" },
  });
});

it("finishes after two steps, each ended by its reply as an earlier build raised it, and cancels each step's deadline", async () => {
  const step0By = fromNow(MINUTE);
  const step1By = fromNow(60 * MINUTE);
  const id = await h.start("HAPPY", {
    schedulerDispatchNext: inOrder(
      dispatched(0, "do", step0By),
      dispatched(1, "do", step1By),
      dispatchFinished("Processed"),
    ),
    schedulerRecordReply: () => CONTINUE,
  });
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Running",
    customStatus: { stepIndex: 0, direction: "do", completeBy: step0By.toISOString() },
  });
  expect(timersOf(id)).toEqual([step0By.toISOString()]);

  const reply0 = okReply(id, 0, "do", { reservationId: "R-1" });
  await h.deliver(reply0);
  // Step 0's deadline is gone with its wait: only step 1's is armed, and passing step 0's fires nothing.
  expect(timersOf(id)).toEqual([step1By.toISOString()]);
  await h.clock.advanceTo(fromNow(2 * MINUTE));
  expect(h.status(id).runtimeStatus).toBe("Running");

  await h.deliver(okReply(id, 1, "do"));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
  });
  expect(h.calls("HAPPY").map((c) => c.name)).toEqual([
    "schedulerDispatchNext",
    "schedulerRecordReply",
    "schedulerDispatchNext",
    "schedulerRecordReply",
    "schedulerDispatchNext",
  ]);
  // The reply is recorded as the agent sent it, for the attempt that waited for it.
  expect(h.calls("HAPPY")[1]?.input).toEqual({ orderId: "HAPPY", lockedBy: id, reply: reply0 });
  expect(events(id, "TimerCreated")).toHaveLength(2);
  expect(events(id, "TimerFired")).toEqual([]);
  expect(timersOf(id)).toEqual([]);
});

it("takes the next move from the activity that recorded an earlier build's reply, with no dispatch activity between", async () => {
  const step0By = fromNow(MINUTE);
  const step1By = fromNow(2 * MINUTE);
  const id = await h.start("MERGED", {
    schedulerDispatchNext: inOrder(dispatched(0, "do", step0By)),
    schedulerRecordReply: inOrder<AfterReply>(dispatched(1, "do", step1By), dispatchFinished("Processed")),
  });
  await h.deliver(okReply(id, 0, "do"));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Running",
    customStatus: { stepIndex: 1, direction: "do", completeBy: step1By.toISOString() },
  });
  expect(timersOf(id)).toEqual([step1By.toISOString()]);
  await h.deliver(okReply(id, 1, "do"));
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
  });
  expect(h.calls("MERGED").map((c) => c.name)).toEqual([
    "schedulerDispatchNext",
    "schedulerRecordReply",
    "schedulerRecordReply",
  ]);
});

it("times out exactly at completeBy when no reply comes, a week ahead in virtual time, and tells the Supervisor", async () => {
  const completeBy = fromNow(WEEK);
  const id = await h.start("SILENT", {
    schedulerDispatchNext: inOrder(dispatched(0, "do", completeBy)),
    schedulerReportDeadline: () => REPORTED,
  });

  await h.clock.advanceTo(new Date(completeBy.getTime() - 1));
  expect(h.status(id).runtimeStatus).toBe("Running");
  await h.clock.advanceTo(completeBy);
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    lastUpdatedTime: completeBy.toISOString(),
    output: {
      outcome: "timedOut",
      detail: `step 0 do passed ${completeBy.toISOString()}, reported to the Supervisor`,
    } satisfies SchedulerResult,
  });
  expect(h.calls("SILENT").map((c) => [c.name, c.input])).toEqual([
    ["schedulerDispatchNext", { orderId: "SILENT", lockedBy: id }],
    [
      "schedulerReportDeadline",
      {
        orderId: "SILENT",
        lockedBy: id,
        stepIndex: 0,
        direction: "do",
        completeBy: completeBy.toISOString(),
      },
    ],
  ]);
});

it("leaves the attempt to the Supervisor's sweep when the deadline notice cannot be sent, and still ends", async () => {
  const completeBy = fromNow(MINUTE);
  const id = await h.start("UNREPORTED", { schedulerDispatchNext: inOrder(dispatched(0, "do", completeBy)) });
  await h.engine.runUntilIdle();
  expect(h.status(id)).toMatchObject({ runtimeStatus: "Completed", output: { outcome: "timedOut" } });
  expect((h.status(id).output as SchedulerResult).detail).toMatch(/not reported \(.*\); left to the sweep$/);
  // Each execution of the notice failed: the activity retries ran out first.
  expect(h.calls("UNREPORTED").filter((c) => c.name === "schedulerReportDeadline")).toHaveLength(
    ACTIVITY_RETRY.maxAttempts,
  );
});

it("ignores a reply that comes after the timeout: the delivery succeeds and the attempt's result stays", async () => {
  const id = await h.start("LATE", {
    schedulerDispatchNext: inOrder(dispatched(0, "do", fromNow(MINUTE))),
    schedulerReportDeadline: () => REPORTED,
  });
  await h.engine.runUntilIdle();
  const timedOut = h.status(id);
  expect(timedOut.output).toMatchObject({ outcome: "timedOut" });

  // The host answers 410 for an instance that has finished, which the durable client takes as done: the reply
  // router's delivery succeeds, so the message is not retried, and the attempt is as the timeout left it.
  await h.deliver(okReply(id, 0, "do"));
  expect(h.status(id)).toEqual(timedOut);
  expect(h.calls("LATE").map((c) => c.name)).toEqual(["schedulerDispatchNext", "schedulerReportDeadline"]);
});

it("ends fenced, without waiting, when the dispatch finds the record held by another attempt", async () => {
  const reason = "record is held by FENCED:2";
  const started = h.clock.now().toISOString();
  const id = await h.start("FENCED", { schedulerDispatchNext: inOrder({ kind: "fenced", reason }) });
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    lastUpdatedTime: started,
    output: { outcome: "fenced", detail: reason } satisfies SchedulerResult,
  });
  expect(events(id, "TimerCreated")).toEqual([]);
  expect(h.calls("FENCED").map((c) => c.name)).toEqual(["schedulerDispatchNext"]);
});

it("stops when the dispatch stops the attempt (a workflow version this build does not have)", async () => {
  const reason = "unknown workflow version";
  const id = await h.start("UNKNOWN-WORKFLOW", {
    schedulerDispatchNext: inOrder({ kind: "stopped", reason }),
  });
  expect(h.status(id).output).toEqual({ outcome: "stopped", detail: reason } satisfies SchedulerResult);
});

it.each([
  {
    after: { kind: "stop", reason: "transient: Timeout" },
    result: { outcome: "stopped", detail: "transient: Timeout" },
  },
  {
    after: { kind: "finished", processState: "Compensated" },
    result: { outcome: "finished", processState: "Compensated" },
  },
] satisfies Array<{ after: AfterReply; result: SchedulerResult }>)(
  "ends $result.outcome when the recorded reply says $after.kind",
  async ({ after, result }) => {
    const orderId = `RECORDED-${after.kind}`;
    const id = await h.start(orderId, {
      schedulerDispatchNext: inOrder(dispatched(0, "do", fromNow(MINUTE))),
      schedulerRecordReply: inOrder(after),
    });
    await h.deliver(okReply(id, 0, "do"));
    expect(h.status(id)).toMatchObject({ runtimeStatus: "Completed", output: result });
    expect(h.calls(orderId).map((c) => c.name)).toEqual(["schedulerDispatchNext", "schedulerRecordReply"]);
  },
);

it(`stops after MAX_ORCHESTRATION_TURNS (${MAX_ORCHESTRATION_TURNS}) turns that never finish`, async () => {
  // A workflow that never runs out of moves: every step forward and back, again and again.
  const turn = (n: number): [number, StepKind] => [n >> 1, n % 2 ? "undo" : "do"];
  const id = await h.start("ENDLESS", {
    schedulerDispatchNext: (_input, call) => dispatched(...turn(call), fromNow(MINUTE)),
    schedulerRecordReply: () => CONTINUE,
  });
  // Each reply is raised before its wait begins, and kept until then, as the extension keeps events: the turns
  // then run without a round trip each (their replays alone take most of a second). One more than the limit, so
  // that a loop running past it shows as an extra turn rather than as a wait.
  for (let n = 0; n < MAX_ORCHESTRATION_TURNS + 1; n++) {
    const reply = okReply(id, ...turn(n));
    h.engine.raiseEvent(id, replyEventName(reply.stepIndex, reply.kind), reply);
  }
  await h.engine.whenIdle();
  expect(h.status(id)).toMatchObject({
    runtimeStatus: "Completed",
    output: { outcome: "stopped", detail: "turn limit reached" } satisfies SchedulerResult,
  });
  const names = h.calls("ENDLESS").map((c) => c.name);
  expect(names.filter((n) => n === "schedulerDispatchNext")).toHaveLength(MAX_ORCHESTRATION_TURNS);
  expect(names.filter((n) => n === "schedulerRecordReply")).toHaveLength(MAX_ORCHESTRATION_TURNS);
});

it("keeps waiting through replies for another step or direction, and times out", async () => {
  const completeBy = fromNow(MINUTE);
  const id = await h.start("MISMATCH", {
    schedulerDispatchNext: inOrder(dispatched(1, "undo", completeBy)),
    schedulerReportDeadline: () => REPORTED,
  });
  await h.deliver(okReply(id, 1, "do"));
  await h.deliver(okReply(id, 0, "undo"));
  // Both reached the instance, and neither ended the wait.
  expect(events(id, "EventRaised").map((e) => e.Name)).toEqual([
    replyEventName(1, "do"),
    replyEventName(0, "undo"),
  ]);
  expect(h.status(id).runtimeStatus).toBe("Running");

  await h.engine.runUntilIdle();
  expect(h.status(id)).toMatchObject({
    lastUpdatedTime: completeBy.toISOString(),
    output: { outcome: "timedOut" },
  });
  expect(h.calls("MISMATCH").map((c) => c.name)).toEqual([
    "schedulerDispatchNext",
    "schedulerReportDeadline",
  ]);
});

describe("activity retries (ACTIVITY_RETRY)", () => {
  /** `stub` after a first execution that throws, as an activity of a fresh deployment does before its roles apply. */
  const failingFirst =
    <R>(stub: (input: unknown, call: number) => R) =>
    (input: unknown, call: number): R => {
      if (call === 0) throw new Error("403 Forbidden (role assignment not yet propagated)");
      return stub(input, call - 1);
    };

  it("retries an activity that fails once, after the first interval, and the attempt ends as usual", async () => {
    const start = h.clock.now().getTime();
    const id = await h.start("FLAKY", {
      schedulerDispatchNext: failingFirst(
        inOrder(dispatched(0, "do", fromNow(MINUTE)), dispatchFinished("Processed")),
      ),
      schedulerRecordReply: failingFirst(inOrder(CONTINUE)),
    });
    await h.clock.advance(ACTIVITY_RETRY.firstRetryIntervalMs);
    await h.deliver(okReply(id, 0, "do"));
    await h.clock.advance(ACTIVITY_RETRY.firstRetryIntervalMs);
    expect(h.status(id)).toMatchObject({
      runtimeStatus: "Completed",
      output: { outcome: "finished", processState: "Processed" } satisfies SchedulerResult,
    });
    const first = ACTIVITY_RETRY.firstRetryIntervalMs;
    expect(h.calls("FLAKY").map((c) => [c.name, Date.parse(c.at) - start])).toEqual([
      ["schedulerDispatchNext", 0],
      ["schedulerDispatchNext", first],
      ["schedulerRecordReply", first],
      ["schedulerRecordReply", 2 * first],
      ["schedulerDispatchNext", 2 * first],
    ]);
  });

  it("fails the orchestration after maxAttempts tries of an activity that always fails, spaced by the intervals", async () => {
    const id = await h.start("BROKEN", {
      schedulerDispatchNext: () => {
        throw new Error("503 Service Unavailable");
      },
    });
    await h.engine.runUntilIdle();
    const status = h.status(id);
    expect(status.runtimeStatus).toBe("Failed");
    expect(String(status.output)).toContain("503 Service Unavailable");
    const times = h.calls("BROKEN").map((c) => Date.parse(c.at));
    expect(times).toHaveLength(ACTIVITY_RETRY.maxAttempts);
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(ACTIVITY_RETRY_INTERVALS_MS);
  });
});
