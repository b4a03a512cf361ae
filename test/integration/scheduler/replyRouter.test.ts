/**
 * The reply path against the embedded emulators: an answer is recorded with the attempt's next move in one fenced
 * write, the next request goes out, and only a move that ends the attempt's dispatches is raised on the
 * orchestration; a repeat finds it all made; an answer past its step's completeBy is not recorded; and the deadline
 * activity, when the step's timer fires after an answer was recorded, goes on from the record instead of reporting
 * a deadline that was met. The orchestration's side is in orchestration.test.ts; here the app's durable client
 * calls (attemptClient) are captured where the durable client would send them.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import type { DurableClient } from "durable-functions";
import {
  agentRequestQueue,
  ATTEMPT_ENDED_EVENT,
  claimAndDispatch,
  orderWorkflowV1,
  QUEUES,
  submit,
  type AgentReply,
  type StateRecord,
} from "../../../src/domain";
import { reportDeadline, type DeadlineInput } from "../../../src/scheduler/activities";
import { attemptClient } from "../../../src/scheduler/durableClient";
import { routeReply } from "../../../src/scheduler/replyRouter";
import { drain, startAppStack, type AppStack } from "../../support/appStack";
import { at, sampleOrder } from "../../support/domain";

const STEP_TIMEOUT_SECONDS = 30;
/** The step after the one the tests answer: its agent's queue gets the next request. */
const SECOND = orderWorkflowV1.steps[1]!;

let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack({ STEP_TIMEOUT_SECONDS: String(STEP_TIMEOUT_SECONDS) });
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  for (const queue of [QUEUES.deadlines, agentRequestQueue(SECOND.agent), "status-demo"])
    await drain(stack.bus, queue);
});

/** An order whose attempt 1 was claimed at `claimedAt` with its first step dispatched (deadline 30 s later). */
async function waitingOnFirstStep(orderId: string, claimedAt: Date): Promise<StateRecord> {
  const { states, orders } = stack.deps;
  const order = sampleOrder({ orderId });
  await orders.ensure(order, claimedAt);
  await states.create(submit(order, { now: at(0), workflow: orderWorkflowV1 }));
  const outcome = await states.apply(orderId, (r) =>
    claimAndDispatch(r, {
      now: claimedAt,
      claimTimeoutSeconds: 5,
      stepTimeoutSeconds: STEP_TIMEOUT_SECONDS,
    }),
  );
  if (outcome.kind !== "written") throw new Error(`could not claim ${orderId}: ${outcome.kind}`);
  return outcome.record;
}

/** The agent's ok answer to the request the record shows dispatched for step `stepIndex`. */
const answerTo = (record: StateRecord, stepIndex = 0): AgentReply => ({
  requestId: record.steps[stepIndex]!.requestId!,
  orderId: record.orderId,
  instanceId: record.lockedBy!,
  stepIndex,
  kind: "do",
  outcome: "ok",
  result: { reservationId: `R-${record.orderId}` },
});

/** What the orchestration hands its deadline activity when the first step's timer fires. */
const firstStepDeadline = (record: StateRecord): DeadlineInput => ({
  orderId: record.orderId,
  lockedBy: record.lockedBy!,
  stepIndex: 0,
  direction: "do",
  completeBy: record.completeBy!,
});

/** The app's durable client calls over a durable client that captures each event raised, or answers `fail`. */
function raisedEvents(fail?: Error) {
  const raised: Array<{ instanceId: string; eventName: string; data: unknown }> = [];
  const durable: Pick<DurableClient, "raiseEvent"> = {
    raiseEvent: async (instanceId, eventName, data) => {
      if (fail) throw fail;
      raised.push({ instanceId, eventName, data });
    },
  };
  return { raised, client: attemptClient(durable as DurableClient) };
}

/** Answers every step of `record`'s attempt but the last, through the reply path: the record waits on the last. */
async function answerAllButLast(record: StateRecord): Promise<StateRecord> {
  const { client } = raisedEvents();
  let current = record;
  for (let i = 0; i < current.steps.length - 1; i++) {
    await routeReply(stack.deps, stack.context("agentReplies"), client, answerTo(current, i));
    current = (await stack.deps.states.get(record.orderId))!;
  }
  return current;
}

it("records the answer with the next dispatch in one write and sends the next request, raising nothing", async () => {
  const record = await waitingOnFirstStep("RR-1", at(100));
  stack.deps.now = () => at(110);
  const { raised, client } = raisedEvents();
  const outcome = await routeReply(stack.deps, stack.context("agentReplies"), client, answerTo(record));

  const after = (await stack.deps.states.get("RR-1"))!;
  const next = {
    kind: "dispatched",
    stepIndex: 1,
    direction: "do",
    completeBy: at(110 + STEP_TIMEOUT_SECONDS).toISOString(),
  };
  // The attempt goes on: the orchestration's timer, at step 0's completeBy, stands for step 1 too.
  expect(outcome).toEqual({ kind: "recorded", next, raised: false });
  expect(raised).toEqual([]);
  expect(after.steps.map((s) => s.status).slice(0, 2)).toEqual(["Succeeded", "Dispatched"]);
  expect(after.history.slice(-2).map((h) => h.event)).toEqual(["stepSucceeded", "stepDispatched"]);
  expect(after._etag).not.toBe(record._etag);
  const requests = (await drain(stack.bus, agentRequestQueue(SECOND.agent))) as Array<{ requestId: string }>;
  expect(requests.map((r) => r.requestId)).toEqual([after.steps[1]!.requestId]);
});

it("raises the attempt's end on its orchestration when the last step's answer finishes the order", async () => {
  stack.deps.now = () => at(150);
  const waiting = await answerAllButLast(await waitingOnFirstStep("RR-END", at(150)));
  const last = waiting.steps.length - 1;
  const { raised, client } = raisedEvents();
  const outcome = await routeReply(
    stack.deps,
    stack.context("agentReplies"),
    client,
    answerTo(waiting, last),
  );
  const recorded = { kind: "finished", processState: "Processed" };
  expect(outcome).toEqual({ kind: "recorded", next: recorded, raised: true });
  expect(raised).toEqual([
    {
      instanceId: waiting.lockedBy,
      eventName: ATTEMPT_ENDED_EVENT,
      data: { requestId: waiting.steps[last]!.requestId, recorded },
    },
  ]);
  expect((await stack.deps.states.get("RR-END"))!.processState).toBe("Processed");
});

it("finds a repeated answer made: the record unchanged, the request re-sent under its id; a lost end is found at the timer", async () => {
  const record = await waitingOnFirstStep("RR-2", at(200));
  stack.deps.now = () => at(210);
  await routeReply(stack.deps, stack.context("agentReplies"), raisedEvents().client, answerTo(record));
  const written = (await stack.deps.states.get("RR-2"))!;

  // The reply is delivered again a second later (the process died before settling it): nothing is written twice.
  stack.deps.now = () => at(211);
  const again = await routeReply(
    stack.deps,
    stack.context("agentReplies"),
    raisedEvents().client,
    answerTo(record),
  );
  expect(again).toMatchObject({
    kind: "recorded",
    next: { kind: "dispatched", stepIndex: 1, direction: "do", completeBy: written.completeBy },
    raised: false,
  });
  expect((await stack.deps.states.get("RR-2"))!._etag).toBe(written._etag);
  // Sent twice under one MessageId: the request queue's duplicate detection keeps one.
  expect(await drain(stack.bus, agentRequestQueue(SECOND.agent))).toHaveLength(1);

  // The last answer's event fails (the process died after the write). Its redelivery finds the attempt over and
  // drops it; the orchestration learns the end at its timer, from the record.
  const waiting = await answerAllButLast(written);
  const last = answerTo(waiting, waiting.steps.length - 1);
  const dying = raisedEvents(new Error("the process died before telling the orchestration"));
  await expect(routeReply(stack.deps, stack.context("agentReplies"), dying.client, last)).rejects.toThrow(
    /process died/,
  );
  const finished = (await stack.deps.states.get("RR-2"))!;
  expect(finished.processState).toBe("Processed");
  const redelivered = raisedEvents();
  expect(await routeReply(stack.deps, stack.context("agentReplies"), redelivered.client, last)).toMatchObject(
    {
      kind: "stale",
    },
  );
  expect(redelivered.raised).toEqual([]);
  expect((await stack.deps.states.get("RR-2"))!._etag).toBe(finished._etag);
  expect(
    await reportDeadline(stack.deps, stack.context("schedulerReportDeadline"), firstStepDeadline(record)),
  ).toEqual({
    kind: "finished",
    processState: "Processed",
  });
});

it("does not record an answer that comes after its step's completeBy: the Supervisor decides on the attempt", async () => {
  const record = await waitingOnFirstStep("RR-3", at(300));
  stack.deps.now = () => at(300 + STEP_TIMEOUT_SECONDS + 1);
  const { raised, client } = raisedEvents();
  const outcome = await routeReply(stack.deps, stack.context("agentReplies"), client, answerTo(record));
  expect(outcome).toMatchObject({ kind: "stale" });
  expect((outcome as { reason: string }).reason).toContain(
    `after the step's completeBy ${record.completeBy}`,
  );
  expect(raised).toEqual([]);
  expect((await stack.deps.states.get("RR-3"))!._etag).toBe(record._etag);
  expect(await drain(stack.bus, agentRequestQueue(SECOND.agent))).toEqual([]);
});

it("keeps the answer recorded when the task hub does not know the attempt", async () => {
  stack.deps.now = () => at(401);
  const waiting = await answerAllButLast(await waitingOnFirstStep("RR-4", at(400)));
  const { client } = raisedEvents(new Error("No instance with ID 'RR-4:1' found."));
  const last = waiting.steps.length - 1;
  const outcome = await routeReply(
    stack.deps,
    stack.context("agentReplies"),
    client,
    answerTo(waiting, last),
  );
  expect(outcome).toMatchObject({ kind: "recorded", next: { kind: "finished" }, raised: false });
  expect((await stack.deps.states.get("RR-4"))!.processState).toBe("Processed");
});

it("goes on from the record when the step's timer fires after its answer was recorded, and reports no deadline", async () => {
  const record = await waitingOnFirstStep("RR-5", at(500));
  stack.deps.now = () => at(529);
  const { client } = raisedEvents();
  await routeReply(stack.deps, stack.context("agentReplies"), client, answerTo(record));
  const recorded = (await stack.deps.states.get("RR-5"))!;

  // The orchestration's timer, at step 0's completeBy, fires with step 1 in progress: no event told it of step 1.
  stack.deps.now = () => at(530);
  const deadline = firstStepDeadline(record);
  expect(await reportDeadline(stack.deps, stack.context("schedulerReportDeadline"), deadline)).toEqual({
    kind: "dispatched",
    stepIndex: 1,
    direction: "do",
    completeBy: recorded.completeBy,
  });
  expect(await drain(stack.bus, QUEUES.deadlines)).toEqual([]);
  expect((await stack.deps.states.get("RR-5"))!._etag).toBe(recorded._etag);
});

it("reports the deadline of a step still unanswered", async () => {
  const record = await waitingOnFirstStep("RR-6", at(600));
  stack.deps.now = () => at(630);
  const deadline = firstStepDeadline(record);
  expect(await reportDeadline(stack.deps, stack.context("schedulerReportDeadline"), deadline)).toEqual({
    kind: "reported",
  });
  expect(await drain(stack.bus, QUEUES.deadlines)).toEqual([
    { orderId: "RR-6", instanceId: record.lockedBy, stepIndex: 0, kind: "do", completeBy: record.completeBy },
  ]);
});
