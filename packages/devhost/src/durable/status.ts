// How instances look from the outside: the status object the durable client expects (the shape of the
// extension's HTTP API), the readable history it can ask for, and instance queries with paging.
import { EventType, eventTypeName, fromJson, type HistoryEvent } from "./history";
import type { InstanceRecord, RuntimeStatus } from "./store";

export const RUNTIME_STATUSES: readonly RuntimeStatus[] = [
  "Pending",
  "Running",
  "Completed",
  "ContinuedAsNew",
  "Failed",
  "Terminated",
  "Suspended",
];

/** Still in progress: the status API answers 202 for these. */
export const IN_PROGRESS: readonly RuntimeStatus[] = ["Pending", "Running", "ContinuedAsNew", "Suspended"];

export interface InstanceStatus {
  name: string;
  instanceId: string;
  createdTime: string;
  lastUpdatedTime: string;
  /** Never undefined: the client rejects a status without input/output. */
  input: unknown;
  output: unknown;
  runtimeStatus: RuntimeStatus;
  customStatus: unknown;
  /** With showHistory, as the extension names it (durable-functions 3.x reads `history`, so its own copy stays empty). */
  historyEvents?: Record<string, unknown>[];
}

export interface StatusOptions {
  showHistory?: boolean;
  showHistoryOutput?: boolean;
  /** Defaults to true, as in the extension. */
  showInput?: boolean;
}

const orNull = (text: string | undefined): unknown => (text === undefined ? null : (fromJson(text) ?? null));

export function toStatus(r: InstanceRecord, opts: StatusOptions = {}): InstanceStatus {
  const status: InstanceStatus = {
    name: r.name,
    instanceId: r.instanceId,
    createdTime: r.createdTime,
    lastUpdatedTime: r.lastUpdatedTime,
    input: opts.showInput === false ? null : orNull(r.input),
    output: orNull(r.output),
    runtimeStatus: r.runtimeStatus,
    customStatus: orNull(r.customStatus),
  };
  // The extension has no history to show for an instance that has not started.
  if (opts.showHistory && r.runtimeStatus !== "Pending") {
    status.historyEvents = readableHistory(r.history, {
      outputs: opts.showHistoryOutput === true,
      inputs: opts.showInput !== false,
    });
  }
  return status;
}

/** Drops undefined fields, as the extension's serializer drops nulls. */
function compact(entry: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined));
}

/**
 * The history as the extension's status API shows it: event types by name; a scheduling event folded into its
 * completion or failure (FunctionName, ScheduledTime, Input) and shown on its own only while it is pending;
 * OrchestratorStarted/Completed left out. Results appear only with showHistoryOutput and are JSON; inputs
 * appear unless showInput=false and stay JSON text, as the extension leaves them.
 */
export function readableHistory(
  history: readonly HistoryEvent[],
  show: { outputs: boolean; inputs: boolean },
): Record<string, unknown>[] {
  const answered = new Set<number>();
  const scheduled = new Map<number, HistoryEvent>();
  for (const e of history) {
    if (
      e.EventType === EventType.TaskScheduled ||
      e.EventType === EventType.SubOrchestrationInstanceCreated
    ) {
      scheduled.set(e.EventId, e);
    }
    if (COMPLETIONS.has(e.EventType) && e.TaskScheduledId !== undefined) answered.add(e.TaskScheduledId);
  }
  const input = (text: string | undefined): string | undefined => (show.inputs ? text : undefined);
  const result = (text: string | undefined): unknown => (show.outputs ? orNull(text) : undefined);
  const out: Record<string, unknown>[] = [];
  for (const e of history) {
    const head = { EventType: eventTypeName(e.EventType), Timestamp: e.Timestamp };
    const source = scheduled.get(e.TaskScheduledId ?? -1);
    const origin = {
      ScheduledTime: source?.Timestamp,
      FunctionName: source?.Name,
      Input: input(source?.Input),
    };
    switch (e.EventType) {
      case EventType.OrchestratorStarted:
      case EventType.OrchestratorCompleted:
        break;
      case EventType.ExecutionStarted:
        out.push(compact({ ...head, FunctionName: e.Name, Input: input(e.Input) }));
        break;
      case EventType.TaskScheduled:
      case EventType.SubOrchestrationInstanceCreated:
        if (!answered.has(e.EventId))
          out.push(compact({ ...head, Name: e.Name, InstanceId: e.InstanceId, Input: input(e.Input) }));
        break;
      case EventType.TaskCompleted:
      case EventType.SubOrchestrationInstanceCompleted:
        out.push(compact({ ...head, ...origin, Result: result(e.Result) }));
        break;
      case EventType.TaskFailed:
      case EventType.SubOrchestrationInstanceFailed:
        out.push(
          compact({
            ...head,
            Reason: e.Reason ?? e.FailureDetails?.ErrorMessage,
            Details: e.Details,
            FailureDetails: e.FailureDetails,
            ...origin,
          }),
        );
        break;
      case EventType.TimerCreated:
      case EventType.TimerFired:
        out.push(compact({ ...head, FireAt: e.FireAt }));
        break;
      case EventType.EventRaised:
      case EventType.EventSent:
        out.push(compact({ ...head, InstanceId: e.InstanceId, Name: e.Name, Input: input(e.Input) }));
        break;
      case EventType.ExecutionSuspended:
      case EventType.ExecutionResumed:
        out.push(compact({ ...head, Reason: e.Reason }));
        break;
      case EventType.GenericEvent:
        out.push(compact({ ...head, Data: e.Data }));
        break;
      // DTFx ends every execution with ExecutionCompleted and its status; a termination is the terminate
      // message (its reason as plain text) followed by that. The engine keeps one event per outcome and shows
      // it the DTFx way.
      case EventType.ExecutionTerminated:
        out.push(compact({ ...head, Input: show.inputs ? orNull(e.Result) : undefined }));
        out.push(executionCompleted(e, result));
        break;
      case EventType.ExecutionCompleted:
      case EventType.ExecutionFailed:
        out.push(executionCompleted(e, result));
        break;
      default:
        out.push(head);
    }
  }
  return out;
}

const COMPLETIONS = new Set<number>([
  EventType.TaskCompleted,
  EventType.TaskFailed,
  EventType.SubOrchestrationInstanceCompleted,
  EventType.SubOrchestrationInstanceFailed,
]);

function executionCompleted(
  e: HistoryEvent,
  result: (text: string | undefined) => unknown,
): Record<string, unknown> {
  return compact({
    EventType: "ExecutionCompleted",
    Timestamp: e.Timestamp,
    OrchestrationStatus: e.OrchestrationStatus,
    Result: result(e.Result),
  });
}

export interface InstanceQuery {
  runtimeStatus?: RuntimeStatus[];
  createdTimeFrom?: Date;
  createdTimeTo?: Date;
  instanceIdPrefix?: string;
  /** Page size; all matches when absent. */
  top?: number;
  continuationToken?: string;
  showInput?: boolean;
}

export interface InstancePage {
  instances: InstanceStatus[];
  /** Present when more matches follow; pass it back to get them. */
  continuationToken?: string;
}

export function matches(r: InstanceRecord, q: InstanceQuery): boolean {
  if (q.runtimeStatus && q.runtimeStatus.length > 0 && !q.runtimeStatus.includes(r.runtimeStatus))
    return false;
  const created = Date.parse(r.createdTime);
  if (q.createdTimeFrom && created < q.createdTimeFrom.getTime()) return false;
  if (q.createdTimeTo && created > q.createdTimeTo.getTime()) return false;
  if (q.instanceIdPrefix && !r.instanceId.startsWith(q.instanceIdPrefix)) return false;
  return true;
}

interface Cursor {
  t: string;
  id: string;
}

// Ordered by creation time then id; the token names the last item returned, so a page boundary stays put
// when instances are created or purged between two requests.
const byCreation = (a: InstanceRecord, b: InstanceRecord): number =>
  a.createdTime < b.createdTime
    ? -1
    : a.createdTime > b.createdTime
      ? 1
      : a.instanceId < b.instanceId
        ? -1
        : 1;

export function queryInstances(all: Iterable<InstanceRecord>, q: InstanceQuery): InstancePage {
  let rows = [...all].filter((r) => matches(r, q)).sort(byCreation);
  if (q.continuationToken) {
    const cursor = decodeCursor(q.continuationToken);
    rows = rows.filter(
      (r) => r.createdTime > cursor.t || (r.createdTime === cursor.t && r.instanceId > cursor.id),
    );
  }
  const page = q.top !== undefined ? rows.slice(0, q.top) : rows;
  const last = page[page.length - 1];
  const more = q.top !== undefined && rows.length > q.top && last !== undefined;
  return {
    instances: page.map((r) => toStatus(r, { showInput: q.showInput })),
    ...(more ? { continuationToken: encodeCursor({ t: last.createdTime, id: last.instanceId }) } : {}),
  };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

function decodeCursor(token: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<Cursor>;
    if (typeof c.t === "string" && typeof c.id === "string") return { t: c.t, id: c.id };
  } catch {
    // fall through
  }
  throw new InvalidContinuationToken(token);
}

export class InvalidContinuationToken extends Error {
  constructor(token: string) {
    super(`Invalid continuation token '${token}': pass back the x-ms-continuation-token of a previous page`);
  }
}
