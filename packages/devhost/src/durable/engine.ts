// The durable task engine of the devhost: the part of the Durable Task extension + DTFx that a local run
// needs. It owns the task hub (store.ts), dispatches orchestration episodes (one at a time),
// activities (bounded concurrency) and entity batches, fires durable timers from a Clock, and serves the
// durable client's operations. Everything is first written to the hub, then acted on, so a process
// killed at any point resumes where the hub says it was.
import crypto from "node:crypto";
import type http from "node:http";
import path from "node:path";
import { format } from "node:util";
import { InvocationContext } from "@azure/functions";
import { runActivity } from "./activityRunner";
import { VirtualClock, RealClock, type Clock, type TimerHandle } from "./clock";
import { runEntityBatch } from "./entityRunner";
import { queryEntities, type EntityPage, type EntityQuery } from "./entityQuery";
import { EventType, fromJson, newEvent, toJson, type HistoryEvent } from "./history";
import { runHttpActivity } from "./httpActivity";
import { HTTP_ACTIVITY_NAME } from "./httpTask";
import { OrchestrationRunner } from "./orchestrationRunner";
import {
  entityEnqueueOps,
  newInstanceRecord,
  serializeInput,
  toSchedulerId,
  validateInstanceId,
} from "./records";
import { DEFAULT_REPLAY_SCHEMA } from "./replay";
import { planRewind } from "./rewind";
import { handleDurableRpc, type DurableClientOperations } from "./rpc";
import {
  matches,
  queryInstances,
  toStatus,
  type InstancePage,
  type InstanceQuery,
  type InstanceStatus,
  type StatusOptions,
} from "./status";
import { isTerminal, TaskHubStore, type EntityRequest, type InstanceRecord, type StoreOp } from "./store";
import {
  DurableRequestError,
  type ActivityWork,
  type DurableFunctionRegistration,
  type DurableHop,
  type DurableInvoke,
  type EngineServices,
  type EntityIdLike,
  type FunctionKind,
  type HopDelay,
  type PendingTimer,
  type StartOptions,
  type TimerWork,
} from "./types";
import { clientBindingData, managementUrls, type HubAddress, type ManagementUrls } from "./webhooks";

export {
  DurableRequestError,
  type DurableFunctionRegistration,
  type DurableHop,
  type DurableInvoke,
  type HopDelay,
  type EntityIdLike,
  type PendingTimer,
  type StartOptions,
};

export interface DurableEngineOptions {
  /** Directory under which the task hub is persisted (in `<dataDir>/<taskHubName>`); created if missing. */
  dataDir: string;
  taskHubName?: string;
  /** RealClock (default) or VirtualClock. */
  clock?: Clock;
  log?: (line: string) => void;
  /**
   * How functions are invoked (to log each invocation, say). It must call `reg.handler(input, context)`
   * with the context it is given: the engine reads the orchestrator's replay state from it afterwards.
   */
  invoke?: DurableInvoke;
  /** Activities running at once (default 16). */
  maxConcurrentActivities?: number;
  /** ReplaySchema sent to the SDK: 1 = V2, 2 = V3 (default, long timers), 3 = V4. */
  replaySchema?: 1 | 2 | 3;
  /** Operations handed to an entity in one batch (default 50). */
  entityBatchSize?: number;
  /** How long stop() waits for running work before closing the hub anyway (default 10 s). */
  stopTimeoutMs?: number;
  /** Journal size that triggers a snapshot (default 8 MiB). */
  compactAfterBytes?: number;
  /** Instances per page of the HTTP list API when the request names no `top` (default 100). */
  rpcPageSize?: number;
  /**
   * How long callHttp waits before polling a 202 that has no Retry-After (default 30 s, the extension's
   * `httpSettings.defaultAsyncRequestSleepTimeMilliseconds`).
   */
  httpPollIntervalMs?: number;
  /**
   * How long each message or work item takes to reach its target (a latency profile, latency/): the engine
   * takes it only then, on its clock. Default: at once.
   */
  hopDelay?: HopDelay;
  /**
   * The system key a host in front of the webhooks requires (the devhost's `durabletask_extension` key): the
   * management URLs and the client binding carry it as `code=`. Default: none, URLs without a key.
   */
  systemKey?: string;
}

type State = "new" | "started" | "stopping" | "stopped";

const TRIGGER_TYPES = {
  orchestration: "orchestrationTrigger",
  activity: "activityTrigger",
  entity: "entityTrigger",
} as const;

export class DurableEngine implements DurableClientOperations {
  readonly taskHubName: string;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly invoker: DurableInvoke;
  private readonly maxActivities: number;
  private readonly schema: number;
  private readonly entityBatchSize: number;
  private readonly stopTimeoutMs: number;
  private readonly registrations = new Map<string, DurableFunctionRegistration>();
  private store: TaskHubStore | undefined;
  private state: State = "new";
  private detachClock: (() => void) | undefined;

  private readonly readyInstances = new Set<string>();
  private episodeRunning: Promise<void> | undefined;
  private readonly activityQueue: ActivityWork[] = [];
  private readonly runningActivities = new Map<string, Promise<void>>();
  private readonly readyEntities = new Set<string>();
  private readonly runningEntities = new Map<string, Promise<void>>();
  private readonly dueTimers: TimerWork[] = [];
  private readonly armedTimers = new Map<string, { handle: TimerHandle; work: TimerWork }>();
  /** Activities waiting for their notBefore time; not running, so the engine counts as idle meanwhile. */
  private readonly delayedActivities = new Map<string, { handle: TimerHandle; work: ActivityWork }>();
  /**
   * Instances and entities whose latest message is still on its way (hopDelay): taken when it arrives, together
   * with what reached the inbox meanwhile. Like delayed activities, they do not count as work in progress.
   */
  private readonly inTransit = new Map<string, { at: number; handle: TimerHandle }>();
  private idleWaiters: Array<() => void> = [];
  private readonly completionWaiters = new Map<
    string,
    Array<{ resolve: (s: InstanceStatus) => void; reject: (e: Error) => void }>
  >();
  private pumpScheduled = false;
  private readonly services: EngineServices;
  private readonly orchestrations: OrchestrationRunner;

  constructor(private readonly opts: DurableEngineOptions) {
    if (!opts || typeof opts.dataDir !== "string" || opts.dataDir.length === 0) {
      throw new Error("DurableEngine: options.dataDir (the task hub directory) is required");
    }
    this.taskHubName = opts.taskHubName ?? "devhost";
    if (!/^[A-Za-z][A-Za-z0-9]{2,44}$/.test(this.taskHubName)) {
      throw new Error(
        `DurableEngine: taskHubName '${this.taskHubName}' must start with a letter and hold 3-45 letters or digits`,
      );
    }
    this.clock = opts.clock ?? new RealClock();
    this.log = opts.log ?? (() => {});
    this.invoker = opts.invoke ?? ((reg, input, context) => Promise.resolve(reg.handler(input, context)));
    this.maxActivities = opts.maxConcurrentActivities ?? 16;
    this.schema = opts.replaySchema ?? DEFAULT_REPLAY_SCHEMA;
    this.entityBatchSize = opts.entityBatchSize ?? 50;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
    this.services = {
      clock: this.clock,
      schemaVersion: this.schema,
      httpPollIntervalMs: opts.httpPollIntervalMs ?? 30_000,
      store: () => this.openStore(),
      writable: () => this.state === "started" || this.state === "stopping",
      commit: (ops) => this.commit(ops),
      lookup: (name, kind) => this.lookup(name, kind),
      invoke: (reg, input, context) => this.invoke(reg, input, context),
      makeContext: (reg) => this.makeContext(reg),
      log: (line) => this.log(line),
      markReady: (id, hop) => this.markReady(id, hop),
      markEntityReady: (id, hop) => this.markEntityReady(id, hop),
      enqueueActivity: (work, hop) => this.enqueueActivity(work, hop),
      armTimer: (work) => this.armTimer(work),
      disarmTimers: (instanceId, executionId, timerId) => this.disarmTimers(instanceId, executionId, timerId),
      finished: (r) => this.finished(r),
    };
    this.orchestrations = new OrchestrationRunner(this.services);
  }

  // ------------------------------------------------------------------ registration and lifecycle

  register(reg: DurableFunctionRegistration): void {
    if (!reg || typeof reg.name !== "string" || !reg.name || typeof reg.handler !== "function") {
      throw new Error("DurableEngine.register: expected {name, kind, handler}");
    }
    if (!(reg.kind in TRIGGER_TYPES)) {
      throw new Error(
        `DurableEngine.register: '${reg.name}' has kind '${String(reg.kind)}'; expected one of ${Object.keys(TRIGGER_TYPES).join(", ")}`,
      );
    }
    // Function names are case-insensitive in Azure Functions.
    const key = reg.name.toLowerCase();
    if (this.registrations.has(key))
      throw new Error(`DurableEngine.register: '${reg.name}' is already registered`);
    this.registrations.set(key, reg);
  }

  /** Loads the persisted hub and resumes everything it holds. */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`DurableEngine.start: the engine is ${this.state}`);
    this.store = TaskHubStore.open(path.join(this.opts.dataDir, this.taskHubName), {
      compactAfterBytes: this.opts.compactAfterBytes,
    });
    this.state = "started";
    if (this.clock instanceof VirtualClock) this.detachClock = this.clock.attach(() => this.whenIdle());
    this.resumeHub();
    this.pump();
    return Promise.resolve();
  }

  /** Stops dispatching, lets running work finish (up to stopTimeoutMs) and closes the hub. */
  async stop(): Promise<void> {
    if (this.state !== "started") return;
    this.state = "stopping";
    for (const { handle } of [
      ...this.armedTimers.values(),
      ...this.delayedActivities.values(),
      ...this.inTransit.values(),
    ])
      handle.cancel();
    this.armedTimers.clear();
    this.delayedActivities.clear();
    this.inTransit.clear();
    const running = [
      ...(this.episodeRunning ? [this.episodeRunning] : []),
      ...this.runningActivities.values(),
      ...this.runningEntities.values(),
    ];
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (running.length)
          this.log(`durable: stop: gave up waiting for ${running.length} running invocation(s)`);
        resolve();
      }, this.stopTimeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.allSettled(running), timedOut]);
    clearTimeout(timer);
    this.state = "stopped";
    this.detachClock?.();
    this.store?.close();
    for (const w of this.idleWaiters.splice(0)) w();
    for (const waiters of this.completionWaiters.values()) {
      for (const w of waiters) w.reject(new Error("DurableEngine stopped before the instance finished"));
    }
    this.completionWaiters.clear();
  }

  /** Resolves when no work item is runnable right now (durable timers may still be pending). */
  whenIdle(): Promise<void> {
    if (this.state !== "started" || this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * True while a work item is runnable or running (pending durable timers and hop delays do not count): a
   * time-skipping host does not move its clock on meanwhile.
   */
  hasWork(): boolean {
    return this.state === "started" && (this.pumpScheduled || !this.isIdle());
  }

  /** Virtual clock only: settles, then repeatedly jumps to the next timer, until no timer is pending. */
  async runUntilIdle(opts: { maxTimers?: number } = {}): Promise<void> {
    const clock = this.clock;
    if (!(clock instanceof VirtualClock)) {
      throw new Error(
        "runUntilIdle needs a VirtualClock; with the real clock, use whenIdle() or waitForCompletion()",
      );
    }
    const maxTimers = opts.maxTimers ?? 10_000;
    let fired = 0;
    for (;;) {
      await this.whenIdle();
      const next = clock.nextTimerAt();
      if (!next) return;
      if (++fired > maxTimers) {
        throw new Error(
          `runUntilIdle: fired ${maxTimers} timers and more are pending (an eternal orchestration?)`,
        );
      }
      await clock.advanceTo(next);
    }
  }

  // ------------------------------------------------------------------ client operations

  startNew(name: string, options: StartOptions = {}): string {
    const store = this.openStore();
    const reg = this.lookup(name, "orchestration");
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
    const now = this.clock.now();
    const input = serializeInput(options.input, `the input of orchestration '${name}'`);
    const record = newInstanceRecord(instanceId, reg.name, input, options.version, now);
    this.commit([{ k: "putInstance", r: record }]);
    this.log(`durable: started ${reg.name} instance ${instanceId}`);
    this.markReady(instanceId, "orchestrationStart");
    return instanceId;
  }

  getStatus(instanceId: string, opts: StatusOptions = {}): InstanceStatus | undefined {
    const r = this.openStore().instances.get(instanceId);
    return r ? toStatus(r, opts) : undefined;
  }

  list(query: InstanceQuery = {}): InstancePage {
    return queryInstances(this.openStore().instances.values(), query);
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
      newEvent(EventType.EventRaised, this.clock.now(), { Name: eventName, Input: input }),
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
      newEvent(EventType.ExecutionTerminated, this.clock.now(), { Input: toJson(reason ?? null) }),
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
    this.deliver(instanceId, newEvent(EventType.ExecutionSuspended, this.clock.now(), reasonField(reason)));
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
    this.deliver(instanceId, newEvent(EventType.ExecutionResumed, this.clock.now(), reasonField(reason)));
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
    const plan = planRewind(this.openStore(), instanceId, reason ?? "", this.clock.now());
    this.commit(plan.ops);
    this.log(`durable: ${r.name} instance ${instanceId} rewound`);
    for (const id of plan.rewound) this.resumeInstance(this.requireInstance(id));
  }

  /**
   * Starts the instance's orchestrator again with the input of its latest execution, under a new id (the
   * default, as in the extension) or its own; returns the id.
   */
  restart(instanceId: string, options: { newInstanceId?: boolean } = {}): string {
    const r = this.openStore().instances.get(instanceId);
    if (!r) {
      throw new DurableRequestError(
        400,
        `InstanceId does not match a valid orchestration instance: no instance with ID '${instanceId}' exists in task hub '${this.taskHubName}'`,
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
    this.commit([{ k: "deleteInstance", id: instanceId }]);
    return { instancesDeleted: 1 };
  }

  /** Purges every finished instance matching the filter (running ones are left alone). */
  purgeBy(query: Omit<InstanceQuery, "top" | "continuationToken">): { instancesDeleted: number } {
    const victims = [...this.openStore().instances.values()].filter(
      (r) => isTerminal(r.runtimeStatus) && matches(r, query),
    );
    this.commit(victims.map((r) => ({ k: "deleteInstance", id: r.instanceId }) as StoreOp));
    return { instancesDeleted: victims.length };
  }

  signalEntity(entity: EntityIdLike, operation: string, input?: unknown): void {
    if (typeof operation !== "string" || !operation)
      throw new DurableRequestError(400, "operation must be a non-empty string");
    const schedulerId = toSchedulerId(entity);
    if (!this.lookup(entity.name, "entity")) {
      throw new DurableRequestError(404, `No entity function named '${entity.name}' is registered`);
    }
    const request: EntityRequest = {
      id: crypto.randomUUID(),
      name: operation,
      signal: true,
      input: serializeInput(input, `the input of entity operation '${operation}'`),
      enqueuedTime: this.clock.now().toISOString(),
    };
    this.commit(entityEnqueueOps(this.openStore(), schedulerId, request, new Set()));
    this.markEntityReady(schedulerId, "entityOperation");
  }

  readEntityState(entity: EntityIdLike): { exists: boolean; state: unknown } {
    const e = this.openStore().entities.get(toSchedulerId(entity));
    if (!e || !e.exists) return { exists: false, state: undefined };
    return { exists: true, state: e.state === undefined ? null : fromJson(e.state) };
  }

  /** Entities that exist, by name (all when absent), last operation time, in pages. */
  listEntities(query: EntityQuery = {}): EntityPage {
    return queryEntities(this.openStore().entities.values(), query);
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

  /** Durable timers armed right now (cancelled ones excluded). */
  pendingTimers(): PendingTimer[] {
    return [...this.armedTimers.values(), ...this.dueTimers.map((work) => ({ work }))].map(({ work }) => ({
      instanceId: work.instanceId,
      timerId: work.timerId,
      fireAt: new Date(work.fireAt),
    }));
  }

  /**
   * Node http handler for the durable HTTP API; mount it at each of DURABLE_HTTP_PATHS. `webhookOrigin`: where the
   * management URLs it answers with point (default: the origin the request reached, from its Host header).
   */
  handleRpc(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    pathAfterPrefix: string,
    webhookOrigin?: string,
  ): Promise<void> {
    return handleDurableRpc(this, req, res, pathAfterPrefix, this.opts.rpcPageSize ?? 100, webhookOrigin);
  }

  /**
   * The durable client binding value, so that df.getClient(context) talks to this engine: webhooks on `baseUrl`,
   * the client's calls to the RPC endpoint on `rpcOrigin` (default `baseUrl`).
   */
  clientBindingData(baseUrl: string, rpcOrigin?: string): unknown {
    return clientBindingData({ ...this.hubAddress(baseUrl), ...(rpcOrigin ? { rpcOrigin } : {}) });
  }

  /** The management URLs of one instance, as the HTTP API returns them after a start. */
  managementPayload(baseUrl: string, instanceId: string): ManagementUrls {
    return managementUrls(this.hubAddress(baseUrl), instanceId);
  }

  private hubAddress(origin: string): HubAddress {
    const { systemKey } = this.opts;
    return { origin, taskHubName: this.taskHubName, ...(systemKey !== undefined ? { systemKey } : {}) };
  }

  // ------------------------------------------------------------------ scheduling

  private isIdle(): boolean {
    return (
      this.dueTimers.length === 0 &&
      this.readyInstances.size === 0 &&
      this.episodeRunning === undefined &&
      this.activityQueue.length === 0 &&
      this.runningActivities.size === 0 &&
      this.readyEntities.size === 0 &&
      this.runningEntities.size === 0
    );
  }

  private markReady(instanceId: string, hop?: DurableHop): void {
    if (this.holdInTransit(instanceId, instanceId, hop, () => this.markReady(instanceId))) return;
    this.readyInstances.add(instanceId);
    this.pump();
  }

  private markEntityReady(schedulerId: string, hop?: DurableHop): void {
    if (
      this.holdInTransit(`entity\u0000${schedulerId}`, schedulerId, hop, () =>
        this.markEntityReady(schedulerId),
      )
    )
      return;
    this.readyEntities.add(schedulerId);
    this.pump();
  }

  /**
   * Holds back a message `hop` takes time to deliver (hopDelay), or one for a target whose earlier message is
   * still on its way: `arrive` runs when it is there. A message on its way ahead of this one arrives first and
   * brings this one along, as one poll of a queue finds every message that is visible by then.
   */
  private holdInTransit(
    key: string,
    target: string,
    hop: DurableHop | undefined,
    arrive: () => void,
  ): boolean {
    const delay =
      hop && this.opts.hopDelay ? Math.max(0, this.opts.hopDelay(hop, target, this.clock.now())) : 0;
    const pending = this.inTransit.get(key);
    if (delay === 0) return pending !== undefined;
    const at = this.clock.now().getTime() + delay;
    if (pending && pending.at <= at) return true;
    pending?.handle.cancel();
    const handle = this.clock.setTimer(new Date(at), () => {
      this.inTransit.delete(key);
      if (this.state === "started") arrive();
    });
    this.inTransit.set(key, { at, handle });
    return true;
  }

  private pump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    if (this.state !== "started") return;
    while (this.dueTimers.length) this.fireTimer(this.dueTimers.shift() as TimerWork);
    if (!this.episodeRunning) {
      const next = this.readyInstances.values().next();
      if (!next.done) {
        const id = next.value;
        this.readyInstances.delete(id);
        this.episodeRunning = this.guard(`episode of ${id}`, () => this.orchestrations.run(id)).finally(
          () => {
            this.episodeRunning = undefined;
            this.afterWork();
          },
        );
      }
    }
    while (this.runningActivities.size < this.maxActivities && this.activityQueue.length) {
      const w = this.activityQueue.shift() as ActivityWork;
      const key = activityKey(w);
      if (this.runningActivities.has(key)) continue;
      this.runningActivities.set(
        key,
        this.guard(`activity ${w.name}`, () =>
          w.name === HTTP_ACTIVITY_NAME ? runHttpActivity(this.services, w) : runActivity(this.services, w),
        ).finally(() => {
          this.runningActivities.delete(key);
          this.afterWork();
        }),
      );
    }
    for (const id of [...this.readyEntities]) {
      if (this.runningEntities.has(id)) continue;
      this.readyEntities.delete(id);
      this.runningEntities.set(
        id,
        this.guard(`entity ${id}`, () => runEntityBatch(this.services, id, this.entityBatchSize)).finally(
          () => {
            this.runningEntities.delete(id);
            this.afterWork();
          },
        ),
      );
    }
    this.checkIdle();
  }

  private afterWork(): void {
    if (this.state === "started") this.pump();
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.idleWaiters.length && this.isIdle() && !this.pumpScheduled) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** A bug in the engine must not leave an unhandled rejection or stop the dispatcher. */
  private async guard(what: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.log(
        `durable: internal error in ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
    }
  }

  private commit(ops: StoreOp[]): void {
    this.openStore().commit(ops);
  }

  private openStore(): TaskHubStore {
    if (!this.store || this.state === "new") throw new Error("DurableEngine: call start() first");
    if (this.state === "stopped") throw new Error("DurableEngine: the engine is stopped");
    return this.store;
  }

  private lookup(name: string, kind: FunctionKind): DurableFunctionRegistration | undefined {
    const reg = this.registrations.get(String(name).toLowerCase());
    return reg && reg.kind === kind ? reg : undefined;
  }

  private makeContext(reg: DurableFunctionRegistration): InvocationContext {
    const trigger = TRIGGER_TYPES[reg.kind];
    return new InvocationContext({
      invocationId: crypto.randomUUID(),
      functionName: reg.name,
      logHandler: (level, ...args) => this.log(`[${reg.name}] ${level}: ${format(...args)}`),
      options: { trigger: { type: trigger, name: trigger }, extraInputs: [], extraOutputs: [] },
    });
  }

  private invoke(
    reg: DurableFunctionRegistration,
    input: unknown,
    context: InvocationContext,
  ): Promise<unknown> {
    try {
      return this.invoker(reg, input, context);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  // ------------------------------------------------------------------ resume after start

  private resumeHub(): void {
    const store = this.openStore();
    let instances = 0;
    let activities = 0;
    let timers = 0;
    for (const r of store.instances.values()) {
      if (isTerminal(r.runtimeStatus)) continue;
      instances++;
      const resumed = this.resumeInstance(r);
      activities += resumed.activities;
      timers += resumed.timers;
    }
    let entities = 0;
    for (const e of store.entities.values()) {
      if (e.queue.length) {
        this.readyEntities.add(e.schedulerId);
        entities++;
      }
    }
    if (instances || entities) {
      this.log(
        `durable: resumed task hub ${this.taskHubName}: ${instances} running instance(s), ${activities} activity(ies) to run again, ` +
          `${timers} timer(s), ${entities} entity queue(s)`,
      );
    }
  }

  /** Picks an instance up from its history: its queued messages, unanswered activities and pending timers. */
  private resumeInstance(r: InstanceRecord): { activities: number; timers: number } {
    let activities = 0;
    let timers = 0;
    if (r.inbox.length) this.markReady(r.instanceId);
    const answered = new Set<number>();
    const fired = new Set<number>();
    for (const e of [...r.history, ...r.inbox]) {
      if (e.EventType === EventType.TaskCompleted || e.EventType === EventType.TaskFailed) {
        answered.add(e.TaskScheduledId as number);
      }
      if (e.EventType === EventType.TimerFired) fired.add(e.TimerId as number);
    }
    for (const e of r.history) {
      if (e.EventType === EventType.TaskScheduled && !answered.has(e.EventId)) {
        // Started (or about to be) before the process died, never finished: run it again (at least once).
        this.enqueueActivity(activityWorkOf(r, e));
        activities++;
      }
      if (
        e.EventType === EventType.TimerCreated &&
        !fired.has(e.EventId) &&
        !r.cancelledTimers.includes(e.EventId)
      ) {
        this.armTimer({
          instanceId: r.instanceId,
          executionId: r.executionId,
          timerId: e.EventId,
          fireAt: e.FireAt as string,
        });
        timers++;
      }
    }
    return { activities, timers };
  }

  // ------------------------------------------------------------------ timers

  private armTimer(work: TimerWork): void {
    const key = timerKey(work.instanceId, work.executionId, work.timerId);
    if (this.armedTimers.has(key)) return;
    const at = new Date(work.fireAt);
    if (at.getTime() <= this.clock.now().getTime()) {
      this.dueTimers.push(work);
      this.pump();
      return;
    }
    const handle = this.clock.setTimer(at, () => {
      this.armedTimers.delete(key);
      if (this.state !== "started") return;
      this.fireTimer(work);
    });
    this.armedTimers.set(key, { handle, work });
  }

  private disarmTimers(instanceId: string, executionId?: string, timerId?: number): void {
    for (const [key, { handle, work }] of this.armedTimers) {
      if (work.instanceId !== instanceId) continue;
      if (executionId !== undefined && work.executionId !== executionId) continue;
      if (timerId !== undefined && work.timerId !== timerId) continue;
      handle.cancel();
      this.armedTimers.delete(key);
    }
    if (timerId === undefined) {
      for (const [key, { handle, work }] of this.delayedActivities) {
        if (work.instanceId !== instanceId) continue;
        if (executionId !== undefined && work.executionId !== executionId) continue;
        handle.cancel();
        this.delayedActivities.delete(key);
      }
    }
    for (let i = this.dueTimers.length - 1; i >= 0; i--) {
      const w = this.dueTimers[i] as TimerWork;
      if (w.instanceId === instanceId && (timerId === undefined || w.timerId === timerId))
        this.dueTimers.splice(i, 1);
    }
  }

  private fireTimer(work: TimerWork): void {
    const r = this.store?.instances.get(work.instanceId);
    if (!r || r.executionId !== work.executionId || isTerminal(r.runtimeStatus)) return;
    if (r.cancelledTimers.includes(work.timerId)) return;
    if (r.inbox.some((e) => e.EventType === EventType.TimerFired && e.TimerId === work.timerId)) return;
    const at = new Date(Math.max(this.clock.now().getTime(), Date.parse(work.fireAt)));
    const event = newEvent(EventType.TimerFired, at, { TimerId: work.timerId, FireAt: work.fireAt });
    this.commit([{ k: "patchInstance", id: work.instanceId, deliver: [event] }]);
    this.markReady(work.instanceId, "timerFired");
  }

  // ------------------------------------------------------------------ orchestration episodes

  // ------------------------------------------------------------------ activities

  private enqueueActivity(work: ActivityWork, hop?: DurableHop): void {
    const delay = hop && this.opts.hopDelay ? this.opts.hopDelay(hop, work.instanceId, this.clock.now()) : 0;
    if (delay > 0) {
      // On its way to a worker: it starts no earlier than its own notBefore, plus the hop.
      const from = Math.max(this.clock.now().getTime(), work.notBefore ? Date.parse(work.notBefore) : 0);
      work = { ...work, notBefore: new Date(from + delay).toISOString() };
    }
    const due = work.notBefore ? Date.parse(work.notBefore) : 0;
    if (due > this.clock.now().getTime()) {
      const key = activityKey(work);
      if (this.delayedActivities.has(key)) return;
      const handle = this.clock.setTimer(new Date(due), () => {
        this.delayedActivities.delete(key);
        if (this.state === "started") this.enqueueActivity({ ...work, notBefore: undefined });
      });
      this.delayedActivities.set(key, { handle, work });
      return;
    }
    this.activityQueue.push(work);
    this.pump();
  }

  // ------------------------------------------------------------------ entities

  private finished(r: InstanceRecord): void {
    const waiters = this.completionWaiters.get(r.instanceId);
    if (!waiters) return;
    this.completionWaiters.delete(r.instanceId);
    const status = toStatus(r);
    for (const w of waiters) w.resolve(status);
  }

  /** Queues a message for an instance and lets its next episode take it. */
  private deliver(instanceId: string, event: HistoryEvent, hop: DurableHop = "instanceManagement"): void {
    this.commit([{ k: "patchInstance", id: instanceId, deliver: [event] }]);
    this.markReady(instanceId, hop);
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
    const r = this.openStore().instances.get(instanceId);
    if (!r)
      throw new DurableRequestError(
        404,
        `No instance with ID '${instanceId}' exists in task hub '${this.taskHubName}'`,
      );
    return r;
  }
}

const reasonField = (reason: string | undefined): { Reason?: string } =>
  reason === undefined ? {} : { Reason: reason };

function activityWorkOf(r: InstanceRecord, scheduled: HistoryEvent): ActivityWork {
  return {
    instanceId: r.instanceId,
    executionId: r.executionId,
    taskId: scheduled.EventId,
    name: scheduled.Name as string,
    input: scheduled.Input,
    ...(scheduled.FireAt ? { notBefore: scheduled.FireAt } : {}),
  };
}

const activityKey = (w: ActivityWork): string => `${w.instanceId}\u0000${w.executionId}\u0000${w.taskId}`;
const timerKey = (instanceId: string, executionId: string, timerId: number): string =>
  `${instanceId}\u0000${executionId}\u0000${timerId}`;
