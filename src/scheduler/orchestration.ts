/**
 * The Scheduler's workflow: one attempt of one order, as a durable orchestration. Deterministic code only: time
 * comes from the durable timers (context.df.currentUtcDateTime), and every read and write is an activity of
 * ./activities.ts, reached through the typed activity proxy. Nothing here may import a store, the bus or a clock.
 */
import type { OrchestrationContext, OrchestrationHandler } from "durable-functions";
import { ATTEMPT_ENDED_EVENT, MAX_ORCHESTRATION_TURNS, replyEventName, type StepKind } from "../domain";
import {
  isRecordedAnswer,
  type AttemptInput,
  type DispatchOutcome,
  type SchedulerActivities,
} from "./activities";
import { activityProxy } from "./activityProxy";

export const SCHEDULER_ORCHESTRATION = "scheduler";

export interface SchedulerInput {
  orderId: string;
  /** The attempt's trace context (the starter's span), handed to every activity as data; absent: none. */
  traceparent?: string;
  /**
   * The first move, when the starter recorded it with the claim (it sends the request once this instance exists):
   * the orchestration waits for its answer at once. Absent (an attempt an earlier build started, or a claim of a
   * workflow version this build lacks): the first move is the activity's.
   */
  dispatched?: { stepIndex: number; direction: StepKind; completeBy: string };
}

export interface SchedulerResult {
  outcome: "finished" | "fenced" | "timedOut" | "stopped";
  processState?: string;
  detail?: string;
}

/**
 * One attempt (instance id `${orderId}:${attempt}` = the record's lockedBy). It races the attempt's end against a
 * durable timer at the completeBy of the step it waits on, and cancels the loser. The dispatches are made before
 * the waits: the first step's by the starter with the claim, each later one by the reply router, which records an
 * answer and the next move in one write. The router raises an event only when the move ends the attempt's
 * dispatches (ATTEMPT_ENDED_EVENT: finished, stopped, fenced); a step that goes on to the next raises nothing, so an
 * order that goes straight through costs one event and one timer, however many steps it has. When the timer fires
 * first, the deadline activity reads the record: a step answered, with a later one in progress, arms the timer
 * again at that step's completeBy (a later dispatch never has an earlier deadline: one STEP_TIMEOUT_SECONDS for
 * all); no answer ends the attempt, reported to the Supervisor's recovery queue, and the Supervisor, which owns
 * the failure count, decides on the record.
 */
export const schedulerOrchestration: OrchestrationHandler = function* (context: OrchestrationContext) {
  const activities = activityProxy<SchedulerActivities>(context);
  const { orderId, traceparent, dispatched } = context.df.getInput<SchedulerInput>();
  // Tracing is data here: the activities make the spans, under this context (an orchestrator replays).
  const attempt: AttemptInput = {
    orderId,
    lockedBy: context.df.instanceId,
    ...(traceparent ? { traceparent } : {}),
  };
  // Each turn waits for one step's answer (forward or undo); registration refuses a workflow that could need more.
  // Recording an answer dispatches the next move in the same write; an answer recorded by an earlier build's
  // activity says "continue", and the next move is then dispatched by its own activity, as that build did.
  let next: DispatchOutcome = dispatched
    ? { kind: "dispatched", ...dispatched }
    : yield* activities.schedulerDispatchNext(attempt);
  // One wait for the attempt's end, raced in every turn until its event comes. An event raised while an activity
  // ran (the deadline's) completes it then, with no race to end: it is taken before the next race.
  let ended = context.df.waitForExternalEvent(ATTEMPT_ENDED_EVENT);
  for (let turn = 0; turn < MAX_ORCHESTRATION_TURNS; turn++) {
    if (next.kind === "fenced") return { outcome: "fenced", detail: next.reason } satisfies SchedulerResult;
    if (next.kind === "stopped") return { outcome: "stopped", detail: next.reason } satisfies SchedulerResult;
    if (next.kind === "finished")
      return { outcome: "finished", processState: next.processState } satisfies SchedulerResult;

    const awaited = next;
    let answer: unknown;
    if (ended.isCompleted) answer = ended.result;
    else {
      context.df.setCustomStatus({
        stepIndex: awaited.stepIndex,
        direction: awaited.direction,
        completeBy: awaited.completeBy,
      });
      // Earlier builds raised every answer as its step's event: histories of attempts they started hold those.
      const stepAnswer = context.df.waitForExternalEvent(
        replyEventName(awaited.stepIndex, awaited.direction),
      );
      const deadline = context.df.createTimer(new Date(awaited.completeBy));
      const winner = yield context.df.Task.any([ended, stepAnswer, deadline]);
      if (winner === deadline) {
        // No answer by the deadline: the Supervisor decides on this attempt now, from its recovery queue. Should
        // the notice not go out, its periodic sweep finds the record all the same.
        let reported = "reported to the Supervisor";
        try {
          const after = yield* activities.schedulerReportDeadline({
            ...attempt,
            stepIndex: awaited.stepIndex,
            direction: awaited.direction,
            completeBy: awaited.completeBy,
          });
          // The step was answered (before the timer fired, or as it fired) and the attempt went on: race the
          // move the record shows. (Builds before this one returned nothing here.)
          if (after && after.kind !== "reported") {
            next = after;
            continue;
          }
        } catch (error) {
          // The first line only: the durable SDK appends the activity's stack to its message.
          const why = (error instanceof Error ? error.message : String(error)).split("\n")[0];
          reported = `not reported (${why}); left to the sweep`;
        }
        return {
          outcome: "timedOut",
          detail: `step ${awaited.stepIndex} ${awaited.direction} passed ${awaited.completeBy}, ${reported}`,
        } satisfies SchedulerResult;
      }
      deadline.cancel();
      answer = winner === ended ? ended.result : stepAnswer.result;
    }
    // An ended wait is spent: should its move not end the attempt after all, the next race waits anew.
    if (ended.isCompleted) ended = context.df.waitForExternalEvent(ATTEMPT_ENDED_EVENT);

    // The reply path has recorded the answer and sent the move it led to; an event an earlier build raised may
    // carry the reply itself, recorded here as that build did.
    const recorded = isRecordedAnswer(answer)
      ? answer.recorded
      : yield* activities.schedulerRecordReply({ ...attempt, reply: answer });
    if (recorded.kind === "stop")
      return { outcome: "stopped", detail: recorded.reason } satisfies SchedulerResult;
    if (recorded.kind !== "continue") next = recorded;
    else if (turn + 1 < MAX_ORCHESTRATION_TURNS) next = yield* activities.schedulerDispatchNext(attempt);
    else break;
  }
  if (next.kind === "finished")
    return { outcome: "finished", processState: next.processState } satisfies SchedulerResult;
  return { outcome: "stopped", detail: "turn limit reached" } satisfies SchedulerResult;
};
