// Types shared by the engine and its runners, and the narrow set of engine services the runners use.
import type { InvocationContext } from "@azure/functions";
import type { Clock } from "./clock";
import type { InstanceRecord, StoreOp, TaskHubStore } from "./store";

export interface DurableFunctionRegistration {
  name: string;
  kind: "orchestration" | "activity" | "entity";
  handler: (triggerInput: unknown, context: InvocationContext) => unknown;
}

export type FunctionKind = DurableFunctionRegistration["kind"];

export type DurableInvoke = (
  reg: DurableFunctionRegistration,
  input: unknown,
  context: InvocationContext,
) => Promise<unknown>;

export interface StartOptions {
  instanceId?: string;
  input?: unknown;
  version?: string;
}

export interface EntityIdLike {
  name: string;
  key: string;
}

export interface PendingTimer {
  instanceId: string;
  timerId: number;
  fireAt: Date;
}

/** A client request the engine refuses; `status` is the HTTP status the durable HTTP API answers with. */
export class DurableRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "DurableRequestError";
  }
}

export interface ActivityWork {
  instanceId: string;
  executionId: string;
  taskId: number;
  name: string;
  /** JSON text of the input, as recorded in TaskScheduled (absent = no input). */
  input?: string;
  /** ISO time before which it must not start (a callHttp status poll waits for its Retry-After). */
  notBefore?: string;
}

export interface TimerWork {
  instanceId: string;
  executionId: string;
  timerId: number;
  fireAt: string;
}

/**
 * A message or work item on its way through the task hub, which a latency profile may delay: to an orchestration
 * (its start, an external event, a management request, an activity's or sub-orchestration's result, a timer that
 * fired, an entity's response), to an entity (an operation), or to an activity (scheduled by its orchestration).
 */
export type DurableHop =
  | "orchestrationStart"
  | "externalEvent"
  | "instanceManagement"
  | "activityCompleted"
  | "subOrchestrationCompleted"
  | "timerFired"
  | "entityResponse"
  | "entityOperation"
  | "activityScheduled";

/** How long `hop`, sent at `now` to `target` (an instance id or entity id), takes to arrive; 0: at once. */
export type HopDelay = (hop: DurableHop, target: string, now: Date) => number;

/** What the orchestration, activity and entity runners need from the engine. */
export interface EngineServices {
  readonly clock: Clock;
  readonly schemaVersion: number;
  /** How long a callHttp poll waits for a 202 without Retry-After (the extension's HTTP settings). */
  readonly httpPollIntervalMs: number;
  store(): TaskHubStore;
  /** True while results may still be written (the hub is open). */
  writable(): boolean;
  commit(ops: StoreOp[]): void;
  lookup(name: string, kind: FunctionKind): DurableFunctionRegistration | undefined;
  invoke(reg: DurableFunctionRegistration, input: unknown, context: InvocationContext): Promise<unknown>;
  makeContext(reg: DurableFunctionRegistration): InvocationContext;
  log(line: string): void;
  /** A message for the instance is in its inbox; `hop` says what kind, when it may be delayed on the way. */
  markReady(instanceId: string, hop?: DurableHop): void;
  markEntityReady(schedulerId: string, hop?: DurableHop): void;
  enqueueActivity(work: ActivityWork, hop?: DurableHop): void;
  armTimer(work: TimerWork): void;
  disarmTimers(instanceId: string, executionId?: string, timerId?: number): void;
  /** The instance reached a terminal status (wakes waitForCompletion). */
  finished(r: InstanceRecord): void;
}
