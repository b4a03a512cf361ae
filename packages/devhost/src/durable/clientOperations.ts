// The durable client's operations, as the engine serves them (to DurableEngine's callers and, through
// rpc.ts, to df.getClient and the HTTP API): start, status and queries, raise event, terminate, suspend,
// resume, rewind, restart, purge, entity signals and state, and waiting for an instance to finish. Each one
// checks the request, writes its message or change to the hub first, then marks the target ready. The
// engine composes one ClientOperations and delegates its public client methods to it.
import crypto from "node:crypto";
import type { Clock } from "./clock";
import { queryEntities, type EntityPage, type EntityQuery } from "./entityQuery";
import { EventType, fromJson, newEvent, toJson, type HistoryEvent } from "./history";
import {
  entityEnqueueOps,
  newInstanceRecord,
  serializeInput,
  toSchedulerId,
  validateInstanceId,
} from "./records";
import { planRewind } from "./rewind";
import {
  matches,
  queryInstances,
  toStatus,
  type InstancePage,
  type InstanceQuery,
  type InstanceStatus,
  type StatusOptions,
} from "./status";
import {
  isTerminal,
  type EntityRequest,
  type InstanceRecord,
  type StoreOp,
  type TaskHubStore,
} from "./store";
import {
  DurableRequestError,
  type DurableFunctionRegistration,
  type DurableHop,
  type EntityIdLike,
  type FunctionKind,
  type StartOptions,
} from "./types";

/** What the client operations need from the engine. */
export interface ClientDeps {
  readonly taskHubName: string;
  readonly clock: Clock;
  log(line: string): void;
  /** The open hub (throws before start and after stop). */
  store(): TaskHubStore;
  commit(ops: StoreOp[]): void;
  lookup(name: string, kind: FunctionKind): DurableFunctionRegistration | undefined;
  markReady(instanceId: string, hop?: DurableHop): void;
  markEntityReady(schedulerId: string, hop?: DurableHop): void;
  /** Picks a (rewound) instance up from its history: its messages, unanswered activities, pending timers. */
  resumeInstance(r: InstanceRecord): void;
}

type CompletionWaiter = { resolve: (s: InstanceStatus) => void; reject: (e: Error) => void };

export class ClientOperations {
  private readonly completionWaiters = new Map<string, CompletionWaiter[]>();

  constructor(private readonly d: ClientDeps) {}

  startNew(name: string, options: StartOptions = {}): string {
    const store = this.d.store();
    const reg = this.d.lookup(name, "orchestration");
    // The extension refuses an unknown function as a bad argument (400).
    if (!reg) throw new DurableRequestError(400, `No orchestrator function named '${name}' is registered`);
    const instanceId = options.instanceId ?? crypto.randomUUID().replace(/-/g, "");
    validateInstanceId(instanceId);
    const existing = store.instances.get(instanceId);
    if (existing && !isTerminal(existing.runtimeStatus)) {
      throw new DurableRequestError(
        409,
        `An orchestration instance with ID '${instanceId}' already exists and is ${existing.runtimeStatus}`,
      );
    }
    const now = this.d.clock.now();
    const input = serializeInput(options.input, `the input of orchestration '${name}'`);
    const record = newInstanceRecord(instanceId, reg.name, input, options.version, now);
    this.d.commit([{ k: "putInstance", r: record }]);
    this.d.log(`durable: started ${reg.name} instance ${instanceId}`);
    this.d.markReady(instanceId, "orchestrationStart");
    return instanceId;
  }

  getStatus(instanceId: string, opts: StatusOptions = {}): InstanceStatus | undefined {
    const r = this.d.store().instances.get(instanceId);
    return r ? toStatus(r, opts) : undefined;
  }

  list(query: InstanceQuery = {}): InstancePage {
    return queryInstances(this.d.store().instances.values(), query);
  }

  raiseEvent(instanceId: string, eventName: string, data?: unknown): void {
    if (typeof eventName !== "string" || !eventName)
      throw new DurableRequestError(400, "eventName must be a non-empty string");
    const r = this.requireInstance(instanceId);
    if (isTerminal(r.runtimeStatus)) {
      throw new DurableRequestError(
        410,
        `Instance '${instanceId}' is ${r.runtimeStatus}; it no longer accepts events`,
      );
    }
    const input = serializeInput(data, `the data of event '${eventName}'`);
    this.deliver(
      instanceId,
      newEvent(EventType.EventRaised, this.d.clock.now(), { Name: eventName, Input: input }),
      "externalEvent",
    );
  }

  terminate(instanceId: string, reason?: string): void {
    const r = this.requireInstance(instanceId);
    if (isTerminal(r.runtimeStatus)) {
      throw new DurableRequestError(410, `Instance '${instanceId}' is already ${r.runtimeStatus}`);
    }
    this.deliver(
      instanceId,
      newEvent(EventType.ExecutionTerminated, this.d.clock.now(), { Input: toJson(reason ?? null) }),
    );
  }

  /** Suspends a running instance; the status turns Suspended when the engine takes the message, as in DTFx. */
  suspend(instanceId: string, reason?: string): void {
    const r = this.requireLive(instanceId, "suspended");
    if (r.runtimeStatus === "Suspended") {
      // The extension's InvalidOperationException, which its HTTP API answers with 500.
      throw new DurableRequestError(
        500,
        `Cannot suspend the orchestration instance ${instanceId} because instance is in the Suspended state.`,
      );
    }
    this.deliver(instanceId, newEvent(EventType.ExecutionSuspended, this.d.clock.now(), reasonField(reason)));
  }

  /** Resumes a suspended instance; what reached it meanwhile is then delivered. */
  resume(instanceId: string, reason?: string): void {
    const r = this.requireLive(instanceId, "resumed");
    if (r.runtimeStatus !== "Suspended") {
      throw new DurableRequestError(
        500,
        `Cannot resume the orchestration instance ${instanceId} because instance is in the ${r.runtimeStatus} state.`,
      );
    }
    this.deliver(instanceId, newEvent(EventType.ExecutionResumed, this.d.clock.now(), reasonField(reason)));
  }

  /** Rewinds a failed instance to just before its first failure and runs it on from there (rewind.ts). */
  rewind(instanceId: string, reason?: string): void {
    const r = this.requireInstance(instanceId);
    if (r.runtimeStatus === "Completed" || r.runtimeStatus === "Terminated") {
      throw new DurableRequestError(
        410,
        `Instance '${instanceId}' is ${r.runtimeStatus}; only a failed instance can be rewound`,
      );
    }
    if (r.runtimeStatus !== "Failed") {
      throw new DurableRequestError(
        500,
        "The rewind operation is only supported on failed orchestration instances.",
      );
    }
    const plan = planRewind(this.d.store(), instanceId, reason ?? "", this.d.clock.now());
    this.d.commit(plan.ops);
    this.d.log(`durable: ${r.name} instance ${instanceId} rewound`);
    for (const id of plan.rewound) this.d.resumeInstance(this.requireInstance(id));
  }

  /**
   * Starts the instance's orchestrator again with the input of its latest execution, under a new id (the
   * default, as in the extension) or its own; returns the id.
   */
  restart(instanceId: string, options: { newInstanceId?: boolean } = {}): string {
    const r = this.d.store().instances.get(instanceId);
    if (!r) {
      throw new DurableRequestError(
        400,
        `InstanceId does not match a valid orchestration instance: no instance with ID '${instanceId}' exists in task hub '${this.d.taskHubName}'`,
      );
    }
    return this.startNew(r.name, {
      ...(options.newInstanceId === false ? { instanceId } : {}),
      input: fromJson(r.input),
      ...(r.version !== undefined ? { version: r.version } : {}),
    });
  }

  purge(instanceId: string): { instancesDeleted: number } {
    const r = this.requireInstance(instanceId);
    if (!isTerminal(r.runtimeStatus)) {
      throw new DurableRequestError(
        409,
        `Instance '${instanceId}' is ${r.runtimeStatus}; terminate it before purging it`,
      );
    }
    this.d.commit([{ k: "deleteInstance", id: instanceId }]);
    return { instancesDeleted: 1 };
  }

  /** Purges every finished instance matching the filter (running ones are left alone). */
  purgeBy(query: Omit<InstanceQuery, "top" | "continuationToken">): { instancesDeleted: number } {
    const victims = [...this.d.store().instances.values()].filter(
      (r) => isTerminal(r.runtimeStatus) && matches(r, query),
    );
    this.d.commit(victims.map((r) => ({ k: "deleteInstance", id: r.instanceId }) as StoreOp));
    return { instancesDeleted: victims.length };
  }

  signalEntity(entity: EntityIdLike, operation: string, input?: unknown): void {
    if (typeof operation !== "string" || !operation)
      throw new DurableRequestError(400, "operation must be a non-empty string");
    const schedulerId = toSchedulerId(entity);
    if (!this.d.lookup(entity.name, "entity")) {
      throw new DurableRequestError(404, `No entity function named '${entity.name}' is registered`);
    }
    const request: EntityRequest = {
      id: crypto.randomUUID(),
      name: operation,
      signal: true,
      input: serializeInput(input, `the input of entity operation '${operation}'`),
      enqueuedTime: this.d.clock.now().toISOString(),
    };
    this.d.commit(entityEnqueueOps(this.d.store(), schedulerId, request, new Set()));
    this.d.markEntityReady(schedulerId, "entityOperation");
  }

  readEntityState(entity: EntityIdLike): { exists: boolean; state: unknown } {
    const e = this.d.store().entities.get(toSchedulerId(entity));
    if (!e || !e.exists) return { exists: false, state: undefined };
    return { exists: true, state: e.state === undefined ? null : fromJson(e.state) };
  }

  /** Entities that exist, by name (all when absent), last operation time, in pages. */
  listEntities(query: EntityQuery = {}): EntityPage {
    return queryEntities(this.d.store().entities.values(), query);
  }

  /** Resolves with the final status once the instance is Completed, Failed or Terminated. */
  waitForCompletion(instanceId: string): Promise<InstanceStatus> {
    const r = this.requireInstance(instanceId);
    if (isTerminal(r.runtimeStatus)) return Promise.resolve(toStatus(r));
    return new Promise((resolve, reject) => {
      const list = this.completionWaiters.get(instanceId) ?? [];
      list.push({ resolve, reject });
      this.completionWaiters.set(instanceId, list);
    });
  }

  /** The instance reached a terminal status: wakes its waitForCompletion callers. */
  finished(r: InstanceRecord): void {
    const waiters = this.completionWaiters.get(r.instanceId);
    if (!waiters) return;
    this.completionWaiters.delete(r.instanceId);
    const status = toStatus(r);
    for (const w of waiters) w.resolve(status);
  }

  /** The engine stopped: every waitForCompletion still waiting is rejected. */
  stopped(): void {
    for (const waiters of this.completionWaiters.values()) {
      for (const w of waiters) w.reject(new Error("DurableEngine stopped before the instance finished"));
    }
    this.completionWaiters.clear();
  }

  /** Queues a message for an instance and lets its next episode take it. */
  private deliver(instanceId: string, event: HistoryEvent, hop: DurableHop = "instanceManagement"): void {
    this.d.commit([{ k: "patchInstance", id: instanceId, deliver: [event] }]);
    this.d.markReady(instanceId, hop);
  }

  /** The instance, unless it is unknown (404) or finished (410, as the extension answers). */
  private requireLive(instanceId: string, what: string): InstanceRecord {
    const r = this.requireInstance(instanceId);
    if (isTerminal(r.runtimeStatus)) {
      throw new DurableRequestError(
        410,
        `Instance '${instanceId}' is ${r.runtimeStatus}; it can no longer be ${what}`,
      );
    }
    return r;
  }

  private requireInstance(instanceId: string): InstanceRecord {
    const r = this.d.store().instances.get(instanceId);
    if (!r)
      throw new DurableRequestError(
        404,
        `No instance with ID '${instanceId}' exists in task hub '${this.d.taskHubName}'`,
      );
    return r;
  }
}

const reasonField = (reason: string | undefined): { Reason?: string } =>
  reason === undefined ? {} : { Reason: reason };
