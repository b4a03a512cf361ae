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
];

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
  history?: Record<string, unknown>[];
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
  if (opts.showHistory) status.history = readableHistory(r.history, opts.showHistoryOutput === true);
  return status;
}

/**
 * The history as the extension's HTTP API shows it: scheduling events folded into their completions
 * (FunctionName, ScheduledTime), replay bookkeeping (OrchestratorStarted/Completed) left out.
 */
export function readableHistory(
  history: readonly HistoryEvent[],
  withOutputs: boolean,
): Record<string, unknown>[] {
  const scheduled = new Map<number, HistoryEvent>();
  for (const e of history) {
    if (
      e.EventId >= 0 &&
      (e.EventType === EventType.TaskScheduled ||
        e.EventType === EventType.SubOrchestrationInstanceCreated ||
        e.EventType === EventType.TimerCreated)
    ) {
      scheduled.set(e.EventId, e);
    }
  }
  const out: Record<string, unknown>[] = [];
  for (const e of history) {
    const base: Record<string, unknown> = { EventType: eventTypeName(e.EventType), Timestamp: e.Timestamp };
    const source = scheduled.get(e.TaskScheduledId ?? e.TimerId ?? -1);
    switch (e.EventType) {
      case EventType.ExecutionStarted:
        out.push({ ...base, FunctionName: e.Name, ...(withOutputs ? { Input: orNull(e.Input) } : {}) });
        break;
      case EventType.TaskCompleted:
      case EventType.SubOrchestrationInstanceCompleted:
        out.push({
          ...base,
          FunctionName: source?.Name,
          ...(source?.InstanceId ? { InstanceId: source.InstanceId } : {}),
          ...(withOutputs ? { Result: orNull(e.Result) } : {}),
          ScheduledTime: source?.Timestamp,
        });
        break;
      case EventType.TaskFailed:
      case EventType.SubOrchestrationInstanceFailed:
        out.push({
          ...base,
          FunctionName: source?.Name,
          Reason: e.Reason ?? e.FailureDetails?.ErrorMessage,
          Details: e.Details,
          ScheduledTime: source?.Timestamp,
        });
        break;
      case EventType.TimerFired:
        out.push({ ...base, FireAt: e.FireAt, ScheduledTime: source?.Timestamp });
        break;
      case EventType.EventRaised:
        out.push({ ...base, Name: e.Name, ...(withOutputs ? { Input: orNull(e.Input) } : {}) });
        break;
      case EventType.ExecutionCompleted:
      case EventType.ExecutionFailed:
      case EventType.ExecutionTerminated:
        out.push({ ...base, OrchestrationStatus: e.OrchestrationStatus, Result: orNull(e.Result) });
        break;
      default:
        break;
    }
  }
  return out;
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
