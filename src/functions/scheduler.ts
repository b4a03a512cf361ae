import * as df from "durable-functions";
import type { OrchestrationContext, OrchestrationHandler } from "durable-functions";
import { dependencies } from "../app/dependencies";
import { replyEventName } from "../domain";
import { SCHEDULER_ORCHESTRATION } from "../scheduler/durableClient";
import {
  dispatchNext,
  recordReply,
  type AttemptInput,
  type DispatchOutcome,
  type ReplyOutcome,
} from "../scheduler/activities";

const DISPATCH_NEXT = "schedulerDispatchNext";
const RECORD_REPLY = "schedulerRecordReply";

export interface SchedulerInput {
  orderId: string;
}

export interface SchedulerResult {
  outcome: "finished" | "fenced" | "timedOut" | "stopped";
  processState?: string;
  detail?: string;
}

/**
 * One attempt of one order (instance id `${orderId}:${attempt}` = the record's lockedBy). Deterministic: time
 * comes from context.df.currentUtcDateTime via the timers, all I/O is in activities. Per step it records the
 * dispatch, sends the request, and races the agent's reply against a durable timer at the step's completeBy,
 * cancelling the loser. A timeout ends the attempt and leaves the record for the Supervisor.
 */
export const schedulerOrchestration: OrchestrationHandler = function* (context: OrchestrationContext) {
  const { orderId } = context.df.getInput<SchedulerInput>();
  const attempt: AttemptInput = { orderId, lockedBy: context.df.instanceId };
  // Each iteration dispatches one step (forward or undo); a workflow can never need more than this.
  for (let turn = 0; turn < 64; turn++) {
    const next: DispatchOutcome = yield context.df.callActivity(DISPATCH_NEXT, attempt);
    if (next.kind === "fenced") return { outcome: "fenced", detail: next.reason } satisfies SchedulerResult;
    if (next.kind === "finished")
      return { outcome: "finished", processState: next.processState } satisfies SchedulerResult;

    context.df.setCustomStatus({
      stepIndex: next.stepIndex,
      direction: next.direction,
      completeBy: next.completeBy,
    });
    const reply = context.df.waitForExternalEvent(replyEventName(next.stepIndex, next.direction));
    const deadline = context.df.createTimer(new Date(next.completeBy));
    const winner = yield context.df.Task.any([reply, deadline]);
    if (winner !== reply) {
      return {
        outcome: "timedOut",
        detail: `step ${next.stepIndex} ${next.direction} passed ${next.completeBy}`,
      } satisfies SchedulerResult;
    }
    deadline.cancel();

    const recorded: ReplyOutcome = yield context.df.callActivity(RECORD_REPLY, {
      ...attempt,
      reply: reply.result,
    });
    if (recorded.kind === "finished")
      return { outcome: "finished", processState: recorded.processState } satisfies SchedulerResult;
    if (recorded.kind === "stop")
      return { outcome: "stopped", detail: recorded.reason } satisfies SchedulerResult;
  }
  return { outcome: "stopped", detail: "turn limit reached" } satisfies SchedulerResult;
};

df.app.orchestration(SCHEDULER_ORCHESTRATION, schedulerOrchestration);
df.app.activity(DISPATCH_NEXT, {
  handler: (input: AttemptInput, context) => dispatchNext(dependencies(), context, input),
});
df.app.activity(RECORD_REPLY, {
  handler: (input: AttemptInput & { reply: unknown }, context) => recordReply(dependencies(), context, input),
});
