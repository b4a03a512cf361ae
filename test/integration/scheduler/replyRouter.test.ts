/**
 * The reply path against the embedded emulators: an answer is recorded with the attempt's next move in one fenced
 * write, the next request goes out, and the move is raised on the orchestration; a repeat finds it all made; an
 * answer past its step's completeBy is not recorded; and the deadline activity, when the step's timer fires just
 * after an answer was recorded, goes on from the record instead of reporting a deadline that was met.
 * The orchestration's side is in orchestration.test.ts; here the raised events are captured where the durable
 * client would take them.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import {
  agentRequestQueue,
  claimAndDispatch,
  orderWorkflowV1,
  QUEUES,
  submit,
  type AgentReply,
  type StateRecord,
} from "../../../src/domain";
import { reportDeadline, type AfterReply, type DeadlineInput } from "../../../src/scheduler/activities";
import type { AttemptClient } from "../../../src/scheduler/durableClient";
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

const answerTo = (record: StateRecord): AgentReply => ({
  requestId: record.steps[0]!.requestId!,
  orderId: record.orderId,
  instanceId: record.lockedBy!,
  stepIndex: 0,
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

/** The durable client's raise, as the reply path calls it: what it was asked to raise, or the error it answers. */
function raisedEvents(fail?: Error) {
  const raised: Array<{ reply: AgentReply; recorded: AfterReply }> = [];
  const client: Pick<AttemptClient, "deliverRecorded"> = {
    deliverRecorded: async (reply, recorded) => {
      if (fail) throw fail;
      raised.push({ reply, recorded });
    },
  };
  return { raised, client };
}

it("records the answer with the next dispatch in one write, sends the next request, and raises the move", async () => {
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
  expect(outcome).toEqual({ kind: "recorded", next, raised: true });
  expect(raised).toEqual([{ reply: answerTo(record), recorded: next }]);
  expect(after.steps.map((s) => s.status).slice(0, 2)).toEqual(["Succeeded", "Dispatched"]);
  expect(after.history.slice(-2).map((h) => h.event)).toEqual(["stepSucceeded", "stepDispatched"]);
  expect(after._etag).not.toBe(record._etag);
  const requests = (await drain(stack.bus, agentRequestQueue(SECOND.agent))) as Array<{ requestId: string }>;
  expect(requests.map((r) => r.requestId)).toEqual([after.steps[1]!.requestId]);
});

it("finds a repeated answer made: the record unchanged, the request re-sent under its id, the move raised again", async () => {
  const record = await waitingOnFirstStep("RR-2", at(200));
  stack.deps.now = () => at(210);
  const first = raisedEvents(new Error("the process died before telling the orchestration"));
  await expect(
    routeReply(stack.deps, stack.context("agentReplies"), first.client, answerTo(record)),
  ).rejects.toThrow(/process died/);
  const written = (await stack.deps.states.get("RR-2"))!;

  // The reply is delivered again, a second later.
  stack.deps.now = () => at(211);
  const again = raisedEvents();
  const outcome = await routeReply(stack.deps, stack.context("agentReplies"), again.client, answerTo(record));
  expect(outcome).toMatchObject({ kind: "recorded", raised: true });
  expect(again.raised.map((r) => r.recorded)).toEqual([
    { kind: "dispatched", stepIndex: 1, direction: "do", completeBy: written.completeBy },
  ]);
  expect((await stack.deps.states.get("RR-2"))!._etag).toBe(written._etag);
  // Sent twice under one MessageId: the request queue's duplicate detection keeps one.
  expect(await drain(stack.bus, agentRequestQueue(SECOND.agent))).toHaveLength(1);
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
  const record = await waitingOnFirstStep("RR-4", at(400));
  stack.deps.now = () => at(401);
  const { client } = raisedEvents(new Error("No instance with ID 'RR-4:1' found."));
  const outcome = await routeReply(stack.deps, stack.context("agentReplies"), client, answerTo(record));
  expect(outcome).toMatchObject({ kind: "recorded", raised: false });
  expect((await stack.deps.states.get("RR-4"))!.steps[0]!.status).toBe("Succeeded");
});

it("goes on from the record when the step's timer fires after the answer was recorded, and reports no deadline", async () => {
  const record = await waitingOnFirstStep("RR-5", at(500));
  stack.deps.now = () => at(529);
  const { client } = raisedEvents();
  await routeReply(stack.deps, stack.context("agentReplies"), client, answerTo(record));
  const recorded = (await stack.deps.states.get("RR-5"))!;

  // The timer of step 0 fires at its completeBy, before the raised event reached the orchestration.
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
