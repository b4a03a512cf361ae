/**
 * The Scheduler's side effects, run as activities: every store write is a fenced transition applied with a
 * conditional replace, and every request carries a stable MessageId. Activities run at least once, so each is
 * safe to repeat: a repeated dispatch finds its transition unchanged and re-sends the same MessageId, which
 * duplicate detection drops.
 */
import type { Dependencies } from "../app/dependencies";
import {
  agentReplySchema,
  agentRequestQueue,
  answerRecorded,
  isTerminal,
  dispatchedRequest,
  checkReply,
  compensated,
  compensationStepDispatched,
  compensationStepDone,
  andThen,
  compensationStepFailed,
  deadlineMessageId,
  hasUndo,
  nextForwardMove,
  nextStepIndex,
  nextUndoMove,
  OUTLASTED_MARKER,
  outageOutlasted,
  parkForOutage,
  unchanged,
  QUEUES,
  type ParkContext,
  nextUndoIndex,
  processed,
  refuse,
  stepDispatched,
  stepFailedPermanent,
  stepFailedTransient,
  stepSucceeded,
  type AgentRequest,
  type DeadlineMessage,
  type ProcessState,
  type StateRecord,
  type StepKind,
  type TransitionResult,
  type WorkflowDefinition,
} from "../domain";
import { sendDecidedAlert } from "../messaging/decidedAlerts";
import type { Logger } from "../telemetry/logger";
import type { StoreOutcome } from "../store/stateStore";

export interface AttemptInput {
  orderId: string;
  /** The orchestration instance id, which is the attempt's lockedBy. */
  lockedBy: string;
  /** The attempt's trace context, which the activity's span continues (functions/traced.ts). */
  traceparent?: string;
}

/** What the Scheduler's activities read and write: the store, the workflows, the bus, and what they tell people. */
export type SchedulerDependencies = Pick<
  Dependencies,
  "config" | "states" | "orders" | "workflows" | "messaging" | "notifications" | "now"
>;

/**
 * The attempt's next move: a step was dispatched and its answer is awaited; the order is finished; the attempt
 * lost its lock (fenced: another writer moved the record); or it stopped for a reason of its own (a workflow
 * version this build does not have).
 */
export type DispatchOutcome =
  | { kind: "dispatched"; stepIndex: number; direction: StepKind; completeBy: string }
  | { kind: "finished"; processState: ProcessState }
  | { kind: "fenced"; reason: string }
  | { kind: "stopped"; reason: string };

/**
 * What came of recording an answer: the next move already dispatched (or the attempt finished or fenced while
 * dispatching it), the order finished, or the attempt ended. `continue` (dispatch the next move) is what builds
 * before the next move was dispatched in the same activity answered; the orchestration still takes it, so that
 * the histories of attempts those builds started replay.
 */
export type AfterReply =
  | DispatchOutcome
  | { kind: "continue" }
  | { kind: "finished"; processState: ProcessState }
  | {
      kind: "stop";
      reason: string;
      /** The attempt let go of the record (parked for an outage): its place under MAX_IN_FLIGHT is free. */
      released?: true;
    };

/**
 * The event the reply path raises on the attempt's orchestration once it has recorded an answer that ends the
 * attempt's run of dispatches (ATTEMPT_ENDED_EVENT; src/scheduler/replyRouter.ts): the move the answer led to, which
 * the orchestration takes without an activity. Earlier builds raised one for every answer, under the step's
 * replyEventName; before them, such an event carried the agent's reply itself, which the orchestration still records
 * through `schedulerRecordReply`.
 */
export interface RecordedAnswer {
  /** The request answered: for the reader of a durable history. */
  requestId: string;
  recorded: AfterReply;
}

/**
 * Whether a recorded answer's move ends the attempt's run of dispatches (the order finished, the attempt stopped or
 * was fenced), which the reply path raises on the orchestration; the next dispatch it does not.
 */
export function endsDispatches(recorded: AfterReply): boolean {
  return recorded.kind !== "dispatched" && recorded.kind !== "continue";
}

export function isRecordedAnswer(event: unknown): event is RecordedAnswer {
  const recorded = (event as { recorded?: { kind?: unknown } } | null)?.recorded;
  return typeof recorded === "object" && recorded !== null && typeof recorded.kind === "string";
}

/**
 * Whether an activity's outcome frees the attempt's place under MAX_IN_FLIGHT: the order finished (Processed,
 * Compensated, CompensationFailed) or was parked. The app then runs a claim round at once, so that the place goes
 * to the next due order now rather than at the next starter tick (work-conserving admission).
 */
export function freesPlace(outcome: AfterReply | AfterDeadline): boolean {
  return outcome.kind === "finished" || (outcome.kind === "stop" && outcome.released === true);
}

function fenced(outcome: StoreOutcome): { kind: "fenced"; reason: string } {
  if (outcome.kind === "refused")
    return { kind: "fenced", reason: `${outcome.refusal.code}: ${outcome.refusal.reason}` };
  return { kind: "fenced", reason: outcome.kind };
}

/**
 * Did the transition hold: written now, or found already made (this activity run again after a crash)? Either
 * way the attempt goes on from the record; anything else means another writer moved it.
 */
function held(outcome: StoreOutcome): outcome is Extract<StoreOutcome, { kind: "written" | "unchanged" }> {
  return outcome.kind === "written" || outcome.kind === "unchanged";
}

/** The attempt ends where the store stopped it, for the reason `fenced` gives. */
function stopFenced(outcome: StoreOutcome): { kind: "stop"; reason: string } {
  return { kind: "stop", reason: fenced(outcome).reason };
}

/** As `stopFenced`, but a write already made ("unchanged") ends the attempt as a duplicate. */
function stopDuplicateOrFenced(outcome: StoreOutcome): { kind: "stop"; reason: string } {
  return outcome.kind === "unchanged" ? { kind: "stop", reason: "duplicate" } : stopFenced(outcome);
}

/**
 * Decides and records the attempt's next move: dispatch the next forward step (Processing) or the next undo
 * (Compensating), or finish when nothing is left. Recording comes before sending, so that a step that never
 * answers is visible to the Supervisor.
 */
export async function dispatchNext(
  deps: SchedulerDependencies,
  log: Logger,
  { orderId, lockedBy }: AttemptInput,
  /** The record as this attempt has just written it (with its etag): saves the read. */
  fresh?: StateRecord,
): Promise<DispatchOutcome> {
  let record = fresh ?? (await deps.states.getRecent(orderId));
  // What this instance last knew may be older than the claim that started this attempt: ask the store.
  if (deps.states.isRecentCopy(record) && record?.lockedBy !== lockedBy)
    record = await deps.states.get(orderId);
  if (!record) return { kind: "fenced", reason: "state record not found" };
  if (record.lockedBy !== lockedBy)
    return { kind: "fenced", reason: `record is held by ${record.lockedBy ?? "nobody"}` };
  const workflow = deps.workflows.get(record.workflow);
  if (!workflow) {
    await deps.notifications.alert(log, {
      kind: "UnknownWorkflow",
      orderId,
      processState: record.processState,
      reason: `workflow ${record.workflow.name} v${record.workflow.version} is not registered in this build`,
    });
    return { kind: "stopped", reason: "unknown workflow version" };
  }
  const now = deps.now();
  const forward = record.processState === "Processing";
  if (!forward && record.processState !== "Compensating") {
    return { kind: "fenced", reason: `record is ${record.processState}` };
  }

  const stepIndex = forward ? nextStepIndex(record) : nextUndoIndex(record);
  if (stepIndex === -1) {
    const outcome = await deps.states.apply(
      orderId,
      (r) => (forward ? processed(r, { now, lockedBy }) : compensated(r, { now, lockedBy })),
      record,
    );
    if (!held(outcome)) return fenced(outcome);
    await deps.notifications.status(log, outcome.record, forward ? "processed" : "compensated");
    return { kind: "finished", processState: outcome.record.processState };
  }

  const ctx = { now, lockedBy, stepIndex, stepTimeoutSeconds: deps.config.stepTimeoutSeconds };
  const outcome = await deps.states.apply(
    orderId,
    (r) => (forward ? stepDispatched(r, ctx) : compensationStepDispatched(r, ctx)),
    record,
  );
  if (!held(outcome)) return fenced(outcome);
  const direction: StepKind = forward ? "do" : "undo";
  const { completeBy } = await sendDispatchedRequest(
    deps,
    log,
    outcome.record,
    workflow,
    stepIndex,
    direction,
  );
  // An attempt's first dispatch tells the submitter that work (or undo) has started, whichever step it resumes at.
  // A compensation that began inside a forward attempt was already announced by recordReply. Found already
  // written, it is this activity run again: a submitter may then see "processing" twice, never not at all.
  if (outcome.record.history.at(-2)?.event === "claimed")
    await announceAttempt(deps, log, outcome.record, stepIndex);
  return { kind: "dispatched", stepIndex, direction, completeBy };
}

/**
 * Sends the request a dispatch transition recorded on `written` (its requestId as MessageId, so a repeat is dropped
 * by duplicate detection) and returns it. Recording comes first, so that a step that never answers is visible to
 * the Supervisor.
 */
export async function sendDispatchedRequest(
  deps: Pick<SchedulerDependencies, "orders" | "messaging">,
  log: Logger,
  written: StateRecord,
  workflow: WorkflowDefinition,
  stepIndex: number,
  direction: StepKind,
): Promise<AgentRequest> {
  const definition = workflow.steps[stepIndex]!;
  const order = await deps.orders.get(written.orderId);
  if (!order) throw new Error(`order ${written.orderId} has a state record but no order document`);
  // The id the transition recorded: the reply router accepts an answer only to exactly this request, and the agent
  // acts only on exactly this request (src/domain/requestCheck.ts).
  const request = dispatchedRequest(written, definition, order, {
    instanceId: written.lockedBy!,
    stepIndex,
    kind: direction,
  });
  await deps.messaging.send(
    agentRequestQueue(definition.agent),
    {
      body: request,
      messageId: request.requestId,
      correlationId: written.orderId,
      subject: `${definition.name}:${direction}`,
    },
    log,
  );
  return request;
}

/** Tells the submitter that an attempt's work (or undo) has started, at the step it dispatched first. */
export async function announceAttempt(
  deps: Pick<SchedulerDependencies, "notifications">,
  log: Logger,
  written: StateRecord,
  stepIndex: number,
): Promise<void> {
  await deps.notifications.status(
    log,
    written,
    written.processState === "Processing" ? "processing" : "compensating",
    `attempt ${written.attempt}, ${written.steps[stepIndex]!.name}`,
  );
}

export interface RecordReplyInput extends AttemptInput {
  reply: unknown;
}

/** Records an agent's answer through the matching fenced transition and tells the orchestration what next. */
export async function recordReply(
  deps: SchedulerDependencies,
  log: Logger,
  input: RecordReplyInput,
): Promise<AfterReply> {
  const reply = agentReplySchema.parse(input.reply);
  const { orderId, lockedBy } = input;
  if (reply.instanceId !== lockedBy || reply.orderId !== orderId)
    return { kind: "stop", reason: `reply for ${reply.instanceId}, not this attempt` };
  const now = deps.now();
  const base = { now, lockedBy, stepIndex: reply.stepIndex };
  // The router checked the reply against the record; the same check runs with each write, on the record written.
  const apply = (decide: (r: StateRecord) => TransitionResult) =>
    deps.states.apply(orderId, (r) => {
      const verdict = checkReply(r, reply);
      return verdict.verdict === "current"
        ? decide(r)
        : refuse(r, "recordReply", "UnknownRequest", verdict.reason);
    });
  let error = reply.error ?? { code: "Unknown", message: "no error given" };

  if (reply.outcome === "transient" && reply.unavailableUntil !== undefined) {
    const parked = await parkIfUnavailable(
      deps,
      {
        ...base,
        error,
        until: new Date(reply.unavailableUntil),
        outageMaxSeconds: deps.config.outageMaxSeconds,
      },
      apply,
    );
    if (parked.kind === "parked") return parked.next;
    error = parked.error;
  }

  if (reply.kind === "do") {
    if (reply.outcome === "ok") {
      const outcome = await apply((r) => {
        // What the undo will need, taken from the answer by the step's definition in the record's version (a step
        // without undo needs nothing).
        const definition = deps.workflows.get(r.workflow)?.steps[reply.stepIndex];
        const compensation =
          definition && hasUndo(definition) ? definition.compensationFrom(reply.result) : null;
        const succeeded = stepSucceeded(r, { ...base, result: reply.result ?? null, compensation });
        // The next step's dispatch (or the end) in the same write; without the workflow, dispatchNext says why.
        return definition
          ? andThen(succeeded, (s) =>
              nextForwardMove(s, { now, lockedBy, stepTimeoutSeconds: deps.config.stepTimeoutSeconds }),
            )
          : succeeded;
      });
      if (outcome.kind === "written" && outcome.record.processState !== "Processed") {
        // In the state the success left the order in, as the audit trail has it. When the same write went on to
        // Processed, the two fall in one moment and "processed" alone says both.
        await deps.notifications.status(
          log,
          { ...outcome.record, processState: "Processing" },
          "stepSucceeded",
          outcome.record.steps[reply.stepIndex]!.name,
        );
      }
      if (!held(outcome)) return stopFenced(outcome);
      if (outcome.record.processState === "Processed") {
        // Also when unchanged: this is the activity run again after a crash between the write and the send, and
        // the submitter waits for this message. A repeat is possible; a loss would not be.
        await deps.notifications.status(log, outcome.record, "processed");
        return { kind: "finished", processState: "Processed" };
      }
      // Sends the request the write recorded (its dispatch is then a no-op), or dispatches it if it did not.
      return dispatchNext(deps, log, input, outcome.record);
    }
    if (reply.outcome === "transient") {
      const outcome = await apply((r) => stepFailedTransient(r, { ...base, error }));
      if (outcome.kind !== "written") return stopFenced(outcome);
      await reportEndedEarly(deps, log, input, reply.stepIndex, "do", outcome.record);
      return { kind: "stop", reason: `transient: ${error.code}` };
    }
    const outcome = await apply((r) => stepFailedPermanent(r, { ...base, error }));
    if (!held(outcome)) return stopFenced(outcome);
    const state = outcome.record.processState;
    await deps.notifications.status(
      log,
      outcome.record,
      state === "Compensated" ? "compensated" : "compensating",
      `${error.code}: ${error.message}`,
    );
    return state === "Compensated"
      ? { kind: "finished", processState: state }
      : dispatchNext(deps, log, input, outcome.record);
  }

  if (reply.outcome === "ok") {
    const outcome = await apply((r) =>
      andThen(compensationStepDone(r, { ...base, result: reply.result ?? null }), (s) =>
        nextUndoMove(s, { now, lockedBy, stepTimeoutSeconds: deps.config.stepTimeoutSeconds }),
      ),
    );
    if (!held(outcome)) return stopFenced(outcome);
    if (outcome.record.processState === "Compensated") {
      // Also when unchanged, as "processed" above: the final status is sent at least once.
      await deps.notifications.status(log, outcome.record, "compensated");
      return { kind: "finished", processState: "Compensated" };
    }
    // Sends the undo request the write recorded (its dispatch is then a no-op), or dispatches it if it did not.
    return dispatchNext(deps, log, input, outcome.record);
  }
  const outcome = await apply((r) =>
    compensationStepFailed(r, {
      ...base,
      error,
      outcome: reply.outcome === "permanent" ? "permanent" : "transient",
    }),
  );
  if (outcome.kind !== "written") return stopDuplicateOrFenced(outcome);
  if (outcome.record.processState === "CompensationFailed") {
    // The alert was decided in that write; should this process die before it is out, the Supervisor sends it.
    await sendDecidedAlert(deps, log, outcome.record, "scheduler");
    await deps.notifications.status(
      log,
      outcome.record,
      "compensationFailed",
      `${error.code}: ${error.message}`,
    );
    return { kind: "finished", processState: "CompensationFailed" };
  }
  await reportEndedEarly(deps, log, input, reply.stepIndex, "undo", outcome.record);
  return { kind: "stop", reason: `transient undo failure: ${error.code}` };
}

/**
 * A transient failure ended the attempt early (completeBy = now): the Supervisor decides at once, from its recovery
 * queue, as for a step whose deadline passed.
 */
async function reportEndedEarly(
  deps: Pick<Dependencies, "messaging">,
  log: Logger,
  { orderId, lockedBy }: AttemptInput,
  stepIndex: number,
  direction: StepKind,
  written: StateRecord,
): Promise<void> {
  if (written.completeBy === null) return;
  await sendDeadlineNotice(deps, log, {
    orderId,
    lockedBy,
    stepIndex,
    direction,
    completeBy: written.completeBy,
  });
}

/**
 * The agent made no call, its service's breaker being open: park the order until the probe time without counting a
 * failure, unless it has waited for services longer than OUTAGE_MAX_SECONDS: then "outlasted", with the error
 * to record the reply under as the transient failure it is, which the Supervisor counts.
 */
async function parkIfUnavailable(
  deps: SchedulerDependencies,
  ctx: ParkContext,
  apply: (decide: (r: StateRecord) => TransitionResult) => Promise<StoreOutcome>,
): Promise<{ kind: "parked"; next: AfterReply } | { kind: "outlasted"; error: ParkContext["error"] }> {
  let outlasted = false;
  const outcome = await apply((r) => {
    outlasted = outageOutlasted(r, ctx.now, deps.config.outageMaxSeconds);
    return outlasted ? unchanged(r) : parkForOutage(r, ctx);
  });
  if (outlasted) {
    const max = deps.config.outageMaxSeconds;
    return {
      kind: "outlasted",
      error: {
        code: ctx.error.code,
        message: `${ctx.error.message}; waited for services over ${OUTLASTED_MARKER}=${max}: the attempt counts as failed`,
      },
    };
  }
  if (outcome.kind === "written")
    return {
      kind: "parked",
      next: { kind: "stop", reason: `parked until ${outcome.record.retryAt}`, released: true },
    };
  return { kind: "parked", next: stopDuplicateOrFenced(outcome) };
}

export interface DeadlineInput extends AttemptInput {
  stepIndex: number;
  direction: StepKind;
  completeBy: string;
}

/**
 * What the orchestration does after its timer won: the deadline was reported to the Supervisor, or the step's
 * answer had been recorded (by the reply path, which raises only the attempt's end) and the attempt goes on with
 * the move the record shows. Builds before answers were recorded in the reply path returned nothing.
 */
export type AfterDeadline = DispatchOutcome | { kind: "reported" };

/**
 * The orchestration's timer, at the completeBy of the step it waits on, won the race: no end reached it by then.
 * When the record shows that step's answer recorded under this attempt (the reply path records every answer but
 * raises only the end, so this is how the orchestration hears of the later steps of an attempt slower than one
 * step's timeout, and an end raised just after the timer fired crosses it the same way), the attempt goes on from
 * the record: the move in progress, which the reply path has dispatched already (dispatching it again is a no-op
 * that re-sends the same MessageId), or the end. Otherwise it hands the attempt to
 * the Supervisor through its recovery queue, which decides on that record alone (src/supervisor/deadline.ts); the
 * Scheduler itself never counts its own failures. A repeat of this activity sends the same MessageId, which the
 * queue's duplicate detection drops.
 */
export async function reportDeadline(
  deps: SchedulerDependencies,
  log: Logger,
  input: DeadlineInput,
): Promise<AfterDeadline> {
  const record = await deps.states.get(input.orderId);
  const address = { instanceId: input.lockedBy, stepIndex: input.stepIndex, kind: input.direction };
  if (record && answerRecorded(record, address)) {
    if (isTerminal(record.processState)) return { kind: "finished", processState: record.processState };
    if (record.lockedBy === input.lockedBy) return dispatchNext(deps, log, input, record);
  }
  await sendDeadlineNotice(deps, log, input);
  return { kind: "reported" };
}

async function sendDeadlineNotice(
  deps: Pick<Dependencies, "messaging">,
  log: Logger,
  { orderId, lockedBy, stepIndex, direction, completeBy }: DeadlineInput,
): Promise<void> {
  const notice: DeadlineMessage = { orderId, instanceId: lockedBy, stepIndex, kind: direction, completeBy };
  await deps.messaging.send(
    QUEUES.deadlines,
    {
      body: notice,
      messageId: deadlineMessageId(lockedBy, stepIndex, direction),
      correlationId: orderId,
      subject: "deadline",
    },
    log,
  );
}

/**
 * The Scheduler's activities by name: the orchestration calls them through `activityProxy<SchedulerActivities>`,
 * which takes each name, input and result type from here, and the app registers each under its name. This table is
 * the one place where a registered name meets its function. The `scheduler` prefix is deliberate: it namespaces the
 * activities among the host's functions, which share one flat namespace (`scheduler`, `starter`, `supervisor`,
 * `submitOrder`, …), while the functions keep their short names inside this module. The keys are a contract:
 * in-flight orchestrations' durable histories name them, so they never change (docs/contract.md lists them).
 */
export const schedulerActivities = {
  schedulerDispatchNext: dispatchNext,
  schedulerRecordReply: recordReply,
  schedulerReportDeadline: reportDeadline,
};
export type SchedulerActivities = typeof schedulerActivities;
