// The wire vocabulary shared with the durable-functions 3.x replay: history events (PascalCase, numeric
// EventType, as the Durable Task extension sends them) and the actions an orchestrator episode returns.

export const EventType = {
  ExecutionStarted: 0,
  ExecutionCompleted: 1,
  ExecutionFailed: 2,
  ExecutionTerminated: 3,
  TaskScheduled: 4,
  TaskCompleted: 5,
  TaskFailed: 6,
  SubOrchestrationInstanceCreated: 7,
  SubOrchestrationInstanceCompleted: 8,
  SubOrchestrationInstanceFailed: 9,
  TimerCreated: 10,
  TimerFired: 11,
  OrchestratorStarted: 12,
  OrchestratorCompleted: 13,
  EventSent: 14,
  EventRaised: 15,
  ContinueAsNew: 16,
  GenericEvent: 17,
  ExecutionSuspended: 19,
  ExecutionResumed: 20,
} as const;
export type EventTypeCode = (typeof EventType)[keyof typeof EventType];

const eventTypeNames = new Map<number, string>(Object.entries(EventType).map(([k, v]) => [v, k]));
export function eventTypeName(code: number): string {
  return eventTypeNames.get(code) ?? `Unknown(${code})`;
}

export const ActionType = {
  CallActivity: 0,
  CallActivityWithRetry: 1,
  CallSubOrchestrator: 2,
  CallSubOrchestratorWithRetry: 3,
  ContinueAsNew: 4,
  CreateTimer: 5,
  WaitForExternalEvent: 6,
  CallEntity: 7,
  CallHttp: 8,
  SignalEntity: 9,
  WhenAny: 11,
  WhenAll: 12,
  LockEntities: 13,
  ReleaseEntities: 14,
} as const;

/** A history event as the SDK reads it. Fields beyond the common four depend on EventType. */
export interface HistoryEvent {
  EventType: number;
  EventId: number;
  IsPlayed: boolean;
  Timestamp: string;
  Name?: string;
  Input?: string;
  Result?: string;
  Version?: string;
  TaskScheduledId?: number;
  TimerId?: number;
  /** TimerCreated/TimerFired: the fire time. TaskScheduled of a callHttp status poll: it runs no earlier. */
  FireAt?: string;
  InstanceId?: string;
  Reason?: string;
  Details?: string;
  FailureDetails?: FailureDetailsPayload;
  OrchestrationStatus?: string;
  /** GenericEvent: free text (a rewind's reason). */
  Data?: string;
}

export interface FailureDetailsPayload {
  ErrorType: string;
  ErrorMessage: string;
  StackTrace?: string;
  IsNonRetriable?: boolean;
  Properties?: Record<string, unknown>;
}

/** An action as found in OrchestratorState.actions (only the fields the engine reads are typed). */
export interface OrchestratorAction {
  actionType: number;
  functionName?: string;
  input?: unknown;
  instanceId?: string;
  operation?: string;
  fireAt?: string | Date;
  isCanceled?: boolean;
  externalEventName?: string;
  version?: string;
  retryOptions?: RetryOptionsShape;
  compoundActions?: OrchestratorAction[];
}

export interface RetryOptionsShape {
  firstRetryIntervalInMilliseconds: number;
  maxNumberOfAttempts: number;
  backoffCoefficient?: number;
  maxRetryIntervalInMilliseconds?: number;
  retryTimeoutInMilliseconds?: number;
}

export function newEvent(type: EventTypeCode, at: Date, fields: Partial<HistoryEvent> = {}): HistoryEvent {
  return { EventType: type, EventId: -1, IsPlayed: false, Timestamp: at.toISOString(), ...fields };
}

/** Results and inputs travel as JSON text; `undefined` has no JSON form and is recorded as null. */
export function toJson(value: unknown): string {
  const text = JSON.stringify(value === undefined ? null : value);
  return text === undefined ? "null" : text;
}

/** Like toJson, but keeps "no value" distinguishable (the field is omitted). */
export function toJsonOrUndefined(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

export function fromJson(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * CallActivity and ContinueAsNew actions pass their input through the SDK's Utils.processInput, which
 * JSON-encodes strings (and only strings); undo that to get the value the code passed.
 */
export function decodeProcessedInput(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

/** Depth-first list of the leaf actions (WhenAll/WhenAny unpacked), in the order the code produced them. */
export function flattenActions(actions: unknown): OrchestratorAction[] {
  const out: OrchestratorAction[] = [];
  const walk = (a: OrchestratorAction): void => {
    if (a.actionType === ActionType.WhenAll || a.actionType === ActionType.WhenAny) {
      for (const child of a.compoundActions ?? []) walk(child);
    } else {
      out.push(a);
    }
  };
  if (Array.isArray(actions)) {
    for (const group of actions)
      if (Array.isArray(group)) for (const a of group) walk(a as OrchestratorAction);
  }
  return out;
}

/** Canonical text of an action for the determinism check; a timer's isCanceled legitimately changes. */
export function actionFingerprint(action: OrchestratorAction): string {
  return JSON.stringify(action, (key, value: unknown) => (key === "isCanceled" ? undefined : value));
}

const actionTypeNames = new Map<number, string>(Object.entries(ActionType).map(([k, v]) => [v, k]));

/** A short human description of a fingerprinted action, for error messages. */
export function describeAction(fingerprint: string | undefined): string {
  if (fingerprint === undefined) return "nothing (the code scheduled no further action)";
  let a: OrchestratorAction;
  try {
    a = JSON.parse(fingerprint) as OrchestratorAction;
  } catch {
    return fingerprint;
  }
  const kind = actionTypeNames.get(a.actionType) ?? `action type ${a.actionType}`;
  const input = (v: unknown): string => (v === undefined ? "" : `, input ${JSON.stringify(v)}`);
  // CallActivity and ContinueAsNew inputs carry the SDK's extra string encoding (see decodeProcessedInput).
  const processed = (v: unknown): string => {
    try {
      return input(decodeProcessedInput(v));
    } catch {
      return input(v);
    }
  };
  switch (a.actionType) {
    case ActionType.CallActivity:
    case ActionType.CallActivityWithRetry:
      return `${kind} '${a.functionName}'${processed(a.input)}`;
    case ActionType.CallSubOrchestrator:
    case ActionType.CallSubOrchestratorWithRetry:
      return `${kind} '${a.functionName}'${a.instanceId ? ` (instance '${a.instanceId}')` : ""}${input(a.input)}`;
    case ActionType.CreateTimer:
      return `${kind} firing at ${String(a.fireAt)}`;
    case ActionType.WaitForExternalEvent:
      return `${kind} '${a.externalEventName}'`;
    case ActionType.CallEntity:
    case ActionType.SignalEntity:
      return `${kind} '${a.instanceId}' operation '${a.operation}'${input(a.input)}`;
    case ActionType.ContinueAsNew:
      return `${kind}${processed(a.input)}`;
    default:
      return `${kind} ${fingerprint}`;
  }
}
