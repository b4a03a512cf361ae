// Orchestration episodes: hands an instance's queued messages to the real durable-functions replay, checks
// the replay against the previous episode, and commits in one transaction what the code did: the history,
// the work it scheduled (activities, timers, sub-orchestrations, entity calls and signals) and, when it ends,
// its outcome and the notification of its parent. Work starts only after that commit.
import crypto from "node:crypto";
import {
  ActionType,
  decodeProcessedInput,
  EventType,
  flattenActions,
  fromJson,
  newEvent,
  toJson,
  toJsonOrUndefined,
  type HistoryEvent,
  type OrchestratorAction,
} from "./history";
import { HTTP_ACTIVITY_NAME } from "./httpTask";
import { newInstanceRecord, entityEnqueueOps, parseSchedulerId } from "./records";
import {
  cancelledTimerIds,
  checkDeterminism,
  findNewTasks,
  fingerprints,
  runEpisode,
  scheduledIds,
  type EpisodeOutcome,
  type NewTask,
} from "./replay";
import {
  isTerminal,
  type EntityRequest,
  type InstanceRecord,
  type RuntimeStatus,
  type StoreOp,
} from "./store";
import { splitInbox } from "./suspension";
import type { EngineServices, TimerWork } from "./types";

/** Messages that answer a task of one particular execution. */
const EXECUTION_SCOPED = new Set<number>([
  EventType.TaskCompleted,
  EventType.TaskFailed,
  EventType.TimerFired,
  EventType.SubOrchestrationInstanceCompleted,
  EventType.SubOrchestrationInstanceFailed,
]);

/** One episode of one instance: the messages it consumes and the events it starts its history with. */
interface Episode {
  r: InstanceRecord;
  instanceId: string;
  executionId: string;
  /** How many inbox messages (all of them, when the episode began) its commit consumes. */
  consume: number;
  at: Date;
  /** OrchestratorStarted and the messages: what the episode appends to the history before its own events. */
  events: HistoryEvent[];
}

/** What one commit writes (ops) and does once it is written (after), collected while the outcome is read. */
interface Transaction {
  ops: StoreOp[];
  after: Array<() => void>;
  newEntities: Set<string>;
}

/** A completed replay: the SDK's state of the orchestrator and the tasks it has open. */
type Replayed = Extract<EpisodeOutcome, { kind: "ok" }>;

export class OrchestrationRunner {
  constructor(private readonly s: EngineServices) {}

  /** Runs one episode of `instanceId`, if its inbox holds anything, and commits what it did. */
  async run(instanceId: string): Promise<void> {
    const episode = this.begin(instanceId);
    if (!episode) return;
    const reg = this.s.lookup(episode.r.name, "orchestration");
    if (!reg) {
      const message = `Orchestrator function '${episode.r.name}' failed: no orchestrator function named '${episode.r.name}' is registered in this app`;
      this.finish(episode.r, { status: "Failed", output: toJson(message), ...this.closing(episode) });
      return;
    }
    const outcome = await runEpisode({
      instanceId,
      parentInstanceId: episode.r.parent?.instanceId,
      input: fromJson(episode.r.input),
      history: [...episode.r.history.map((e) => ({ ...e, IsPlayed: true })), ...episode.events],
      schemaVersion: this.s.schemaVersion,
      httpPollIntervalMs: this.s.httpPollIntervalMs,
      context: this.s.makeContext(reg),
      call: (payload, context) => this.s.invoke(reg, payload, context),
    });
    // Nothing else touches this instance while its episode runs (terminate and events only queue messages).
    const store = this.s.store();
    if (!this.s.writable() || store.instances.get(instanceId) !== episode.r) return;
    if (episode.r.executionId !== episode.executionId) return;
    this.commit(episode, outcome);
  }

  /**
   * Takes the instance's messages for an episode. Returns undefined when there is no code to replay: an empty
   * inbox, a finished instance (its late messages are dropped, as in Azure), a termination (recorded here), or
   * only suspend/resume taking effect, or a suspended instance (recorded here; the other messages wait).
   */
  private begin(instanceId: string): Episode | undefined {
    const r = this.s.store().instances.get(instanceId);
    if (!r || r.inbox.length === 0) return undefined;
    const messages = r.inbox.map((e) => ({ ...e, IsPlayed: false }));
    const consume = messages.length;
    if (isTerminal(r.runtimeStatus)) {
      this.s.commit([{ k: "patchInstance", id: instanceId, consume }]);
      return undefined;
    }
    // A suspended instance can still be terminated, as in DTFx.
    const terminate = messages.find((e) => e.EventType === EventType.ExecutionTerminated);
    if (terminate) {
      const at = this.episodeTime(r, messages);
      const started = newEvent(EventType.OrchestratorStarted, at);
      this.finish(r, { status: "Terminated", output: terminate.Input, at, consume, events: [started] });
      return undefined;
    }
    const split = splitInbox(r.runtimeStatus === "Suspended", messages);
    if (split.suspended || split.events.length === split.control.length) {
      if (split.control.length === 0) return undefined;
      this.s.commit([
        {
          k: "patchInstance",
          id: instanceId,
          set: {
            runtimeStatus: split.suspended ? "Suspended" : "Running",
            lastUpdatedTime: this.episodeTime(r, []).toISOString(),
          },
          append: split.control,
          consume,
          replaceInbox: split.held,
        },
      ]);
      const change = split.suspended ? "suspended" : "resumed";
      this.s.log(`durable: ${r.name} instance ${instanceId} ${change}`);
      return undefined;
    }
    const at = this.episodeTime(r, split.events);
    const started = newEvent(EventType.OrchestratorStarted, at);
    return { r, instanceId, executionId: r.executionId, consume, at, events: [started, ...split.events] };
  }

  /** What every terminal commit of an episode carries: its time, its messages and its events. */
  private closing(episode: Episode): { at: Date; consume: number; events: HistoryEvent[] } {
    return { at: episode.at, consume: episode.consume, events: episode.events };
  }

  private fail(episode: Episode, message: string, customStatus?: unknown): void {
    const { r } = episode;
    this.s.log(`durable: ${r.name} instance ${r.instanceId} failed: ${message.split("\n")[0]}`);
    this.finish(r, {
      status: "Failed",
      output: toJson(message),
      ...this.closing(episode),
      ...(customStatus !== undefined ? { customStatus } : {}),
    });
  }

  /** Commits what the replay did: a failure, completion, continue-as-new, or the work it scheduled. */
  private commit(episode: Episode, outcome: EpisodeOutcome): void {
    const name = episode.r.name;
    if (outcome.kind === "hostError")
      return this.fail(episode, `Orchestrator function '${name}' failed: ${outcome.message}`);
    if (outcome.kind === "failed") {
      const error = outcome.state.error ?? "unknown error";
      return this.fail(
        episode,
        `Orchestrator function '${name}' failed: ${error}`,
        outcome.state.customStatus,
      );
    }
    const { state } = outcome;
    const divergence = checkDeterminism(episode.instanceId, name, episode.r.prevActions, fingerprints(state));
    if (divergence) return this.fail(episode, divergence, state.customStatus);

    const txn: Transaction = { ops: [], after: [], newEntities: new Set() };
    const flat = flattenActions(state.actions);
    const problem = this.queueSignals(episode, flat, txn);
    if (problem) return this.fail(episode, `Orchestrator function '${name}' failed: ${problem}`);
    const continueAsNew = state.isDone
      ? [...flat].reverse().find((a) => a.actionType === ActionType.ContinueAsNew)
      : undefined;
    if (continueAsNew) return this.continueAsNew(episode, continueAsNew, state.customStatus, txn);
    if (state.isDone) {
      // The extension still creates the timers the last episode made (its shim creates a cancelled one with a
      // cancelled token, so TimerCreated stays and its message fires later into the completed instance), and an
      // instance's cancelled timers include those the last episode cancelled: so the history and the tally say.
      const { openTasks } = outcome;
      const lastTimers = findNewTasks(openTasks, scheduledIds(episode.r.history)).flatMap((task) =>
        task.kind === "timer"
          ? [
              newEvent(EventType.TimerCreated, episode.at, {
                EventId: task.id,
                FireAt: task.fireAt.toISOString(),
              }),
            ]
          : [],
      );
      this.finish(episode.r, {
        status: "Completed",
        output: toJson(state.output),
        ...this.closing(episode),
        events: [...episode.events, ...lastTimers],
        cancelledTimers: [...new Set([...episode.r.cancelledTimers, ...cancelledTimerIds(openTasks)])],
        customStatus: state.customStatus,
        ops: txn.ops,
        after: txn.after,
      });
      return;
    }
    this.recordProgress(episode, outcome, flat, txn);
  }

  /**
   * Queues the entity signals the code sent this episode. Fire-and-forget signals have no task id; the n-th
   * SignalEntity action is the n-th signal. Returns a failure message if one targets no registered entity.
   */
  private queueSignals(episode: Episode, flat: OrchestratorAction[], txn: Transaction): string | undefined {
    for (const signal of signalsOf(flat).slice(episode.r.signalsSent)) {
      const schedulerId = String(signal.instanceId);
      if (!this.entityRegistered(schedulerId)) {
        return `signalEntity targets '${schedulerId}', but no such entity function is registered`;
      }
      const request: EntityRequest = {
        id: crypto.randomUUID(),
        name: String(signal.operation),
        signal: true,
        input: toJsonOrUndefined(signal.input),
        enqueuedTime: episode.at.toISOString(),
      };
      txn.ops.push(...entityEnqueueOps(this.s.store(), schedulerId, request, txn.newEntities));
      txn.after.push(() => this.s.markEntityReady(schedulerId, "entityOperation"));
    }
    return undefined;
  }

  /** Restarts the instance as a new execution with the new input, keeping the events raised meanwhile. */
  private continueAsNew(
    episode: Episode,
    action: OrchestratorAction,
    customStatus: unknown,
    txn: Transaction,
  ): void {
    const { r, instanceId, executionId, at, consume } = episode;
    const input = toJsonOrUndefined(decodeProcessedInput(action.input));
    txn.ops.unshift({
      k: "patchInstance",
      id: instanceId,
      set: {
        runtimeStatus: "ContinuedAsNew",
        executionId: crypto.randomUUID(),
        input: input ?? null,
        lastUpdatedTime: at.toISOString(),
        prevActions: [],
        signalsSent: 0,
        cancelledTimers: [],
        ...(customStatus !== undefined ? { customStatus: toJson(customStatus) } : {}),
      },
      resetHistory: true,
      // Events raised meanwhile carry over to the new execution; completions of the old one's tasks must
      // not (task ids restart at 0 and would be taken for the new execution's).
      replaceInbox: [
        newEvent(EventType.ExecutionStarted, at, { Name: r.name, Input: input, Version: r.version }),
        ...r.inbox.slice(consume).filter((m) => !EXECUTION_SCOPED.has(m.EventType)),
      ],
    });
    this.s.commit(txn.ops);
    this.s.disarmTimers(instanceId, executionId);
    for (const f of txn.after) f();
    this.s.markReady(instanceId, "orchestrationStart");
  }

  /** Still running: records what the code scheduled this episode, commits it, then starts it. */
  private recordProgress(
    episode: Episode,
    replayed: Replayed,
    flat: OrchestratorAction[],
    txn: Transaction,
  ): void {
    const { r, instanceId, executionId, at, consume } = episode;
    const { state, openTasks } = replayed;
    const newEvents: HistoryEvent[] = [];
    const selfDeliveries: HistoryEvent[] = [];
    const cancelled = new Set(r.cancelledTimers);
    for (const task of findNewTasks(openTasks, scheduledIds(r.history))) {
      const problem = this.scheduleTask(r, task, at, { ...txn, newEvents, selfDeliveries, cancelled });
      if (problem)
        return this.fail(episode, `Orchestrator function '${r.name}' failed: ${problem}`, state.customStatus);
    }
    for (const timerId of cancelledTimerIds(openTasks)) {
      if (cancelled.has(timerId)) continue;
      cancelled.add(timerId);
      txn.after.push(() => this.s.disarmTimers(instanceId, executionId, timerId));
    }
    const actionsNow = fingerprints(state);
    txn.ops.unshift({
      k: "patchInstance",
      id: instanceId,
      set: {
        runtimeStatus: "Running",
        lastUpdatedTime: at.toISOString(),
        signalsSent: signalsOf(flat).length,
        cancelledTimers: [...cancelled],
        ...(state.customStatus !== undefined ? { customStatus: toJson(state.customStatus) } : {}),
      },
      append: [...episode.events, ...newEvents, newEvent(EventType.OrchestratorCompleted, at)],
      // The previous actions are a prefix of these (checked before): journal only the new ones.
      appendActions: actionsNow.slice(r.prevActions.length),
      consume,
      deliver: selfDeliveries,
    });
    this.s.commit(txn.ops);
    for (const f of txn.after) f();
    if (r.inbox.length) this.s.markReady(instanceId);
  }

  /** Records one task the SDK opened; returns a failure message if the orchestration cannot go on. */
  private scheduleTask(
    r: InstanceRecord,
    task: NewTask,
    at: Date,
    txn: {
      newEvents: HistoryEvent[];
      selfDeliveries: HistoryEvent[];
      ops: StoreOp[];
      after: Array<() => void>;
      newEntities: Set<string>;
      cancelled: Set<number>;
    },
  ): string | undefined {
    const { instanceId, executionId } = r;
    switch (task.kind) {
      case "unsupported":
        return `${task.what} is not supported by the devhost durable engine`;
      case "refused":
        return task.problem;
      case "http": {
        const input = JSON.stringify(task.request);
        txn.newEvents.push(
          newEvent(EventType.TaskScheduled, at, {
            EventId: task.id,
            Name: HTTP_ACTIVITY_NAME,
            Input: input,
            ...(task.notBefore ? { FireAt: task.notBefore } : {}),
          }),
        );
        const work = { instanceId, executionId, taskId: task.id, name: HTTP_ACTIVITY_NAME, input };
        txn.after.push(() =>
          this.s.enqueueActivity(
            { ...work, ...(task.notBefore ? { notBefore: task.notBefore } : {}) },
            "activityScheduled",
          ),
        );
        return undefined;
      }
      case "timer":
      case "retryTimer": {
        const fireAt = task.kind === "timer" ? task.fireAt : new Date(at.getTime() + task.delayMs);
        const work: TimerWork = { instanceId, executionId, timerId: task.id, fireAt: fireAt.toISOString() };
        txn.newEvents.push(newEvent(EventType.TimerCreated, at, { EventId: task.id, FireAt: work.fireAt }));
        if (task.kind === "timer" && task.cancelled) txn.cancelled.add(task.id);
        else txn.after.push(() => this.s.armTimer(work));
        return undefined;
      }
      case "activity": {
        const name = String(task.action.functionName);
        const reg = this.s.lookup(name, "activity");
        if (!reg)
          return `callActivity('${name}'): no activity function named '${name}' is registered in this app`;
        const input = toJsonOrUndefined(decodeProcessedInput(task.action.input));
        txn.newEvents.push(
          newEvent(EventType.TaskScheduled, at, { EventId: task.id, Name: reg.name, Input: input }),
        );
        txn.after.push(() =>
          this.s.enqueueActivity(
            { instanceId, executionId, taskId: task.id, name: reg.name, input },
            "activityScheduled",
          ),
        );
        return undefined;
      }
      case "subOrchestration": {
        const name = String(task.action.functionName);
        const reg = this.s.lookup(name, "orchestration");
        if (!reg)
          return `callSubOrchestrator('${name}'): no orchestrator function named '${name}' is registered in this app`;
        const childId =
          task.action.instanceId || `${instanceId}:${task.id.toString(16).toUpperCase().padStart(4, "0")}`;
        const input = toJsonOrUndefined(task.action.input);
        txn.newEvents.push(
          newEvent(EventType.SubOrchestrationInstanceCreated, at, {
            EventId: task.id,
            Name: reg.name,
            InstanceId: childId,
            Input: input,
          }),
        );
        const existing = this.s.store().instances.get(childId);
        const startedByThisTask =
          existing?.parent?.instanceId === instanceId &&
          existing.parent.executionId === executionId &&
          existing.parent.taskId === task.id;
        // A child this very task started before a rewind cut it from the history is still running: it is
        // this task's child again, and reports here when it ends.
        if (existing && !isTerminal(existing.runtimeStatus) && startedByThisTask) return undefined;
        if (existing && !isTerminal(existing.runtimeStatus)) {
          txn.selfDeliveries.push(
            newEvent(EventType.SubOrchestrationInstanceFailed, at, {
              TaskScheduledId: task.id,
              Reason: `Sub-orchestration '${reg.name}' could not start: an instance with ID '${childId}' already exists and is ${existing.runtimeStatus}`,
              Details: "",
            }),
          );
          return undefined;
        }
        const child = newInstanceRecord(childId, reg.name, input, task.action.version, at);
        child.parent = { instanceId, executionId, taskId: task.id };
        txn.ops.push({ k: "putInstance", r: child });
        txn.after.push(() => this.s.markReady(childId, "orchestrationStart"));
        return undefined;
      }
      case "entityCall": {
        const schedulerId = String(task.action.instanceId);
        if (!this.entityRegistered(schedulerId)) {
          return `callEntity('${schedulerId}'): no entity function with that name is registered in this app`;
        }
        const operation = String(task.action.operation);
        const input = toJsonOrUndefined(task.action.input);
        const requestId = crypto.randomUUID();
        txn.newEvents.push(
          newEvent(EventType.EventSent, at, {
            EventId: task.id,
            Name: "op",
            InstanceId: schedulerId,
            Input: JSON.stringify({ id: requestId, op: operation, signal: false, input, parent: instanceId }),
          }),
        );
        const request: EntityRequest = {
          id: requestId,
          name: operation,
          signal: false,
          input,
          parent: { instanceId, executionId },
          enqueuedTime: at.toISOString(),
        };
        txn.ops.push(...entityEnqueueOps(this.s.store(), schedulerId, request, txn.newEntities));
        txn.after.push(() => this.s.markEntityReady(schedulerId, "entityOperation"));
        return undefined;
      }
    }
  }

  /**
   * Time of an episode: now, but never before the previous episode (currentUtcDateTime must not go back)
   * nor before a timer being delivered (code after a timer must see at least its fire time).
   */
  private episodeTime(r: InstanceRecord, messages: HistoryEvent[]): Date {
    let t = this.s.clock.now().getTime();
    for (let i = r.history.length - 1; i >= 0; i--) {
      const e = r.history[i] as HistoryEvent;
      if (e.EventType === EventType.OrchestratorStarted) {
        t = Math.max(t, Date.parse(e.Timestamp));
        break;
      }
    }
    for (const m of messages)
      if (m.EventType === EventType.TimerFired && m.FireAt) t = Math.max(t, Date.parse(m.FireAt));
    return new Date(t);
  }

  /** Moves an instance to a terminal status, tells its parent, and wakes whoever waits for it. */
  private finish(
    r: InstanceRecord,
    f: {
      status: Extract<RuntimeStatus, "Completed" | "Failed" | "Terminated">;
      output: string | undefined;
      at: Date;
      consume: number;
      events: HistoryEvent[];
      /** The instance's cancelled timers, when its last episode cancelled some. */
      cancelledTimers?: number[];
      customStatus?: unknown;
      ops?: StoreOp[];
      after?: Array<() => void>;
    },
  ): void {
    const eventType =
      f.status === "Completed"
        ? EventType.ExecutionCompleted
        : f.status === "Failed"
          ? EventType.ExecutionFailed
          : EventType.ExecutionTerminated;
    const ops: StoreOp[] = [
      {
        k: "patchInstance",
        id: r.instanceId,
        set: {
          runtimeStatus: f.status,
          output: f.output ?? null,
          lastUpdatedTime: f.at.toISOString(),
          ...(f.cancelledTimers ? { cancelledTimers: f.cancelledTimers } : {}),
          ...(f.customStatus !== undefined ? { customStatus: toJson(f.customStatus) } : {}),
        },
        append: [
          ...f.events,
          newEvent(EventType.OrchestratorCompleted, f.at),
          newEvent(eventType, f.at, { OrchestrationStatus: f.status, Result: f.output ?? "null" }),
        ],
        consume: f.consume,
      },
      ...(f.ops ?? []),
    ];
    const parent = r.parent ? this.s.store().instances.get(r.parent.instanceId) : undefined;
    const notifyParent =
      r.parent && parent && parent.executionId === r.parent.executionId && !isTerminal(parent.runtimeStatus);
    if (r.parent && notifyParent) {
      const reason =
        f.status === "Terminated"
          ? `Sub-orchestration '${r.name}' (instance '${r.instanceId}') was terminated: ${String(fromJson(f.output) ?? "")}`
          : String(fromJson(f.output));
      ops.push({
        k: "patchInstance",
        id: r.parent.instanceId,
        deliver: [
          f.status === "Completed"
            ? newEvent(EventType.SubOrchestrationInstanceCompleted, f.at, {
                TaskScheduledId: r.parent.taskId,
                Result: f.output ?? "null",
              })
            : newEvent(EventType.SubOrchestrationInstanceFailed, f.at, {
                TaskScheduledId: r.parent.taskId,
                Reason: reason,
                Details: "",
              }),
        ],
      });
    }
    this.s.commit(ops);
    this.s.disarmTimers(r.instanceId);
    for (const fn of f.after ?? []) fn();
    if (r.parent && notifyParent) this.s.markReady(r.parent.instanceId, "subOrchestrationCompleted");
    if (f.status !== "Completed")
      this.s.log(`durable: ${r.name} instance ${r.instanceId} ${f.status.toLowerCase()}`);
    this.s.finished(r);
  }

  private entityRegistered(schedulerId: string): boolean {
    return this.s.lookup(parseSchedulerId(schedulerId).name, "entity") !== undefined;
  }
}

function signalsOf(actions: OrchestratorAction[]): OrchestratorAction[] {
  return actions.filter((a) => a.actionType === ActionType.SignalEntity);
}
