// One orchestrator episode against the real durable-functions replay: build the trigger payload the Durable
// Task extension would send, call the registered handler, and read back both the OrchestratorState it
// returns and the SDK's own bookkeeping of open tasks. The task ids are assigned by the SDK (including the
// ones it adds on its own for retries and long timers), so new work is discovered from that bookkeeping
// rather than by re-implementing the id assignment.
import type { InvocationContext } from "@azure/functions";
import {
  ActionType,
  actionFingerprint,
  describeAction,
  flattenActions,
  type HistoryEvent,
  type OrchestratorAction,
  type RetryOptionsShape,
} from "./history";
import { planHttpTask, type DurableHttpRequestWire, type SdkHttpTask } from "./httpTask";

/** ReplaySchema.V3: V2's action shape plus long timers split into ≤ maximumShortTimerDuration pieces. */
export const DEFAULT_REPLAY_SCHEMA = 2;
export const MAXIMUM_SHORT_TIMER_DURATION = "6.00:00:00";
export const LONG_RUNNING_TIMER_INTERVAL = "3.00:00:00";

export interface OrchestratorStateShape {
  isDone: boolean;
  actions: unknown;
  output?: unknown;
  error?: string;
  customStatus?: unknown;
  schemaVersion?: number;
}

/** The parts of the SDK's internal task objects the engine reads (durable-functions 3.5). */
export interface SdkTask extends SdkHttpTask {
  id: number | string | false;
  readonly actionObj?: unknown;
  isCanceled?: boolean;
  parent?: SdkParentTask;
}
interface SdkParentTask {
  children?: SdkTask[];
  isWaitingOnTimer?: boolean;
  attemptNumber?: number;
  retryOptions?: RetryOptionsShape;
  readonly actionObj?: unknown;
  isCanceled?: boolean;
}

export type EpisodeOutcome =
  | { kind: "ok"; state: OrchestratorStateShape; openTasks: Record<string, SdkTask> }
  | { kind: "failed"; state: OrchestratorStateShape }
  | { kind: "hostError"; message: string };

export interface EpisodeRequest {
  instanceId: string;
  parentInstanceId?: string;
  input: unknown;
  /** The full history handed to the SDK: played events, then this episode's OrchestratorStarted and messages. */
  history: HistoryEvent[];
  schemaVersion: number;
  httpPollIntervalMs: number;
  context: InvocationContext;
  call: (payload: unknown, context: InvocationContext) => Promise<unknown>;
}

const OUT_OF_PROC_LABEL = "\n\n$OutOfProcData$:";

export async function runEpisode(req: EpisodeRequest): Promise<EpisodeOutcome> {
  const payload = {
    // The SDK converts Timestamp strings to Dates in place: hand it its own copy.
    history: JSON.parse(JSON.stringify(req.history)) as unknown,
    input: req.input,
    instanceId: req.instanceId,
    isReplaying: false,
    parentInstanceId: req.parentInstanceId,
    upperSchemaVersion: req.schemaVersion,
    upperSchemaVersionNew: req.schemaVersion,
    longRunningTimerIntervalDuration: LONG_RUNNING_TIMER_INTERVAL,
    maximumShortTimerDuration: MAXIMUM_SHORT_TIMER_DURATION,
    defaultHttpAsyncRequestSleepTimeMillseconds: req.httpPollIntervalMs,
  };
  let state: OrchestratorStateShape;
  try {
    state = (await req.call(payload, req.context)) as OrchestratorStateShape;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = message.indexOf(OUT_OF_PROC_LABEL);
    if (at < 0) return { kind: "hostError", message };
    try {
      return { kind: "failed", state: JSON.parse(message.slice(at + OUT_OF_PROC_LABEL.length)) };
    } catch {
      return { kind: "hostError", message };
    }
  }
  if (!state || typeof state !== "object" || !("actions" in state)) {
    return { kind: "hostError", message: "the orchestrator handler did not return an OrchestratorState" };
  }
  const df = (req.context as unknown as { df?: { taskOrchestratorExecutor?: { openTasks?: unknown } } }).df;
  const openTasks = df?.taskOrchestratorExecutor?.openTasks;
  if (!openTasks || typeof openTasks !== "object") {
    return {
      kind: "hostError",
      message:
        "durable-functions internals changed: context.df.taskOrchestratorExecutor.openTasks is missing " +
        "(the devhost needs durable-functions ~3.5)",
    };
  }
  return { kind: "ok", state, openTasks: openTasks as Record<string, SdkTask> };
}

/** Checks that the previous episode's actions are a prefix of this one's; returns a message if not. */
export function checkDeterminism(
  instanceId: string,
  name: string,
  previous: readonly string[],
  now: readonly string[],
): string | undefined {
  const at = previous.findIndex((fp, i) => fp !== now[i]);
  if (at < 0) return undefined;
  return (
    `Non-deterministic orchestration: instance '${instanceId}' (orchestrator '${name}') diverged from its ` +
    `history at action #${at}: the history records ${describeAction(previous[at])}, but the code now produced ` +
    `${describeAction(now[at])}. Orchestrator code must make the same calls on every replay: use ` +
    `context.df.currentUtcDateTime and context.df.newGuid() instead of Date.now(), new Date() or ` +
    `Math.random(), and do I/O in activities.`
  );
}

export function fingerprints(state: OrchestratorStateShape): string[] {
  return flattenActions(state.actions).map(actionFingerprint);
}

/** Work the SDK opened in this episode, by the task id it assigned. */
export type NewTask =
  | { id: number; kind: "activity"; action: OrchestratorAction }
  | { id: number; kind: "subOrchestration"; action: OrchestratorAction }
  | { id: number; kind: "entityCall"; action: OrchestratorAction }
  | { id: number; kind: "timer"; fireAt: Date; cancelled: boolean }
  | { id: number; kind: "retryTimer"; delayMs: number }
  | { id: number; kind: "http"; request: DurableHttpRequestWire; notBefore?: string }
  | { id: number; kind: "unsupported"; what: string }
  | { id: number; kind: "refused"; problem: string };

const SCHEDULED_TYPES = new Set([4, 7, 10, 14]); // TaskScheduled, SubOrchestrationInstanceCreated, TimerCreated, EventSent

export function scheduledIds(history: readonly HistoryEvent[]): Set<number> {
  const ids = new Set<number>();
  for (const e of history) if (SCHEDULED_TYPES.has(e.EventType) && e.EventId >= 0) ids.add(e.EventId);
  return ids;
}

export function findNewTasks(openTasks: Record<string, SdkTask>, scheduled: ReadonlySet<number>): NewTask[] {
  const out: NewTask[] = [];
  const ids = Object.keys(openTasks)
    .filter((k) => /^\d+$/.test(k) && !scheduled.has(Number(k)))
    .map(Number)
    .sort((a, b) => a - b);
  for (const id of ids) {
    const task = openTasks[String(id)];
    if (task) out.push(classify(id, task));
  }
  return out;
}

function classify(id: number, task: SdkTask): NewTask {
  let action = task.actionObj;
  if (action === "noOp") {
    // RetryableTask bookkeeping: after a failure it opens a task standing for the retry timer; when that
    // fires it opens another standing for the next attempt.
    const parent = task.parent;
    if (!parent?.retryOptions)
      return { id, kind: "unsupported", what: "an SDK no-op task without a retry parent" };
    if (parent.isWaitingOnTimer) return { id, kind: "retryTimer", delayMs: retryDelay(parent) };
    action = parent.actionObj;
  }
  const a = action as OrchestratorAction | undefined;
  switch (a?.actionType) {
    case ActionType.CallActivity:
    case ActionType.CallActivityWithRetry:
      return { id, kind: "activity", action: a };
    case ActionType.CallSubOrchestrator:
    case ActionType.CallSubOrchestratorWithRetry:
      return { id, kind: "subOrchestration", action: a };
    case ActionType.CallEntity:
      return { id, kind: "entityCall", action: a };
    case ActionType.CreateTimer:
      return {
        id,
        kind: "timer",
        fireAt: new Date(a.fireAt as string | Date),
        cancelled: isCancelledTimer(task),
      };
    case ActionType.CallHttp: {
      const plan = planHttpTask(task);
      return "problem" in plan
        ? { id, kind: "refused", problem: plan.problem }
        : { id, kind: "http", ...plan };
    }
    case ActionType.LockEntities:
      return { id, kind: "unsupported", what: "lock (critical sections)" };
    default:
      return { id, kind: "unsupported", what: `action type ${String(a?.actionType)}` };
  }
}

/** A DFTimerTask cancels through its own action; a long timer's pieces through their LongTimerTask parent. */
export function isCancelledTimer(task: SdkTask): boolean {
  return task.isCanceled === true || task.parent?.isCanceled === true;
}

/** Timer task ids (numeric) that the code has cancelled. */
export function cancelledTimerIds(openTasks: Record<string, SdkTask>): number[] {
  const out: number[] = [];
  for (const [k, task] of Object.entries(openTasks)) {
    if (!/^\d+$/.test(k)) continue;
    const a = task.actionObj as OrchestratorAction | undefined;
    if (a && typeof a === "object" && a.actionType === ActionType.CreateTimer && isCancelledTimer(task)) {
      out.push(Number(k));
    }
  }
  return out;
}

/** DTFx RetryInterceptor: first * coefficient^(retries so far), capped by maxRetryInterval. */
function retryDelay(parent: SdkParentTask): number {
  const o = parent.retryOptions as RetryOptionsShape;
  const failures = Math.max(1, (parent.attemptNumber ?? 2) - 1);
  let delay = o.firstRetryIntervalInMilliseconds * Math.pow(o.backoffCoefficient || 1, failures - 1);
  if (o.maxRetryIntervalInMilliseconds && o.maxRetryIntervalInMilliseconds > 0) {
    delay = Math.min(delay, o.maxRetryIntervalInMilliseconds);
  }
  return Math.max(0, delay);
}
