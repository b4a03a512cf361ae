// The durable task engine of the devhost: the part of the Durable Task extension + DTFx that a local run
// needs. This file is its core: the public API (DurableEngine), registration, lifecycle (start, stop,
// idleness), and the dispatch of work items: orchestration episodes (one at a time), activities (bounded
// concurrency) and entity batches, with latency-profile hop delays. The rest is composed in:
// clientOperations.ts (start, raise event, terminate, purge, status queries...), timers.ts (durable timers on
// the Clock), resume.ts (picking a persisted hub up after start), and the runners (orchestrationRunner.ts,
// activityRunner.ts, entityRunner.ts). Everything is first written to the hub, then acted on, so a process
// killed at any point resumes where the hub says it was.
import crypto from "node:crypto";
import type http from "node:http";
import path from "node:path";
import { format } from "node:util";
import { InvocationContext } from "@azure/functions";
import { runActivity } from "./activityRunner";
import { ClientOperations } from "./clientOperations";
import { VirtualClock, RealClock, type Clock, type TimerHandle } from "./clock";
import { runEntityBatch } from "./entityRunner";
import type { EntityPage, EntityQuery } from "./entityQuery";
import { runHttpActivity } from "./httpActivity";
import { HTTP_ACTIVITY_NAME } from "./httpTask";
import { OrchestrationRunner } from "./orchestrationRunner";
import { DEFAULT_REPLAY_SCHEMA } from "./replay";
import { resumeHub, resumeInstance } from "./resume";
import { handleDurableRpc, type DurableClientOperations } from "./rpc";
import type { InstancePage, InstanceQuery, InstanceStatus, StatusOptions } from "./status";
import { TaskHubStore, type InstanceRecord, type StoreOp } from "./store";
import { DurableTimers } from "./timers";
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
  /** Activities waiting for their notBefore time; not running, so the engine counts as idle meanwhile. */
  private readonly delayedActivities = new Map<string, { handle: TimerHandle; work: ActivityWork }>();
  /**
   * Instances and entities whose latest message is still on its way (hopDelay): taken when it arrives, together
   * with what reached the inbox meanwhile. Like delayed activities, they do not count as work in progress.
   */
  private readonly inTransit = new Map<string, { at: number; handle: TimerHandle }>();
  private idleWaiters: Array<() => void> = [];
  private pumpScheduled = false;
  private readonly services: EngineServices;
  private readonly orchestrations: OrchestrationRunner;
  private readonly timers: DurableTimers;
  private readonly client: ClientOperations;

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
      armTimer: (work) => this.timers.arm(work),
      disarmTimers: (instanceId, executionId, timerId) => this.disarmTimers(instanceId, executionId, timerId),
      finished: (r) => this.client.finished(r),
    };
    this.orchestrations = new OrchestrationRunner(this.services);
    this.timers = new DurableTimers({
      clock: this.clock,
      peekStore: () => this.store,
      commit: (ops) => this.commit(ops),
      started: () => this.state === "started",
      markReady: (id, hop) => this.markReady(id, hop),
      pump: () => this.pump(),
    });
    this.client = new ClientOperations({
      taskHubName: this.taskHubName,
      clock: this.clock,
      log: (line) => this.log(line),
      store: () => this.openStore(),
      commit: (ops) => this.commit(ops),
      lookup: (name, kind) => this.lookup(name, kind),
      markReady: (id, hop) => this.markReady(id, hop),
      markEntityReady: (id, hop) => this.markEntityReady(id, hop),
      resumeInstance: (r) => this.resumeInstance(r),
    });
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
    this.timers.cancelAll();
    for (const { handle } of [...this.delayedActivities.values(), ...this.inTransit.values()])
      handle.cancel();
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
    this.client.stopped();
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

  // ------------------------------------------------------------------ client operations (clientOperations.ts)

  startNew(name: string, options: StartOptions = {}): string {
    return this.client.startNew(name, options);
  }

  getStatus(instanceId: string, opts: StatusOptions = {}): InstanceStatus | undefined {
    return this.client.getStatus(instanceId, opts);
  }

  list(query: InstanceQuery = {}): InstancePage {
    return this.client.list(query);
  }

  raiseEvent(instanceId: string, eventName: string, data?: unknown): void {
    this.client.raiseEvent(instanceId, eventName, data);
  }

  terminate(instanceId: string, reason?: string): void {
    this.client.terminate(instanceId, reason);
  }

  /** Suspends a running instance; the status turns Suspended when the engine takes the message, as in DTFx. */
  suspend(instanceId: string, reason?: string): void {
    this.client.suspend(instanceId, reason);
  }

  /** Resumes a suspended instance; what reached it meanwhile is then delivered. */
  resume(instanceId: string, reason?: string): void {
    this.client.resume(instanceId, reason);
  }

  /** Rewinds a failed instance to just before its first failure and runs it on from there (rewind.ts). */
  rewind(instanceId: string, reason?: string): void {
    this.client.rewind(instanceId, reason);
  }

  /**
   * Starts the instance's orchestrator again with the input of its latest execution, under a new id (the
   * default, as in the extension) or its own; returns the id.
   */
  restart(instanceId: string, options: { newInstanceId?: boolean } = {}): string {
    return this.client.restart(instanceId, options);
  }

  purge(instanceId: string): { instancesDeleted: number } {
    return this.client.purge(instanceId);
  }

  /** Purges every finished instance matching the filter (running ones are left alone). */
  purgeBy(query: Omit<InstanceQuery, "top" | "continuationToken">): { instancesDeleted: number } {
    return this.client.purgeBy(query);
  }

  signalEntity(entity: EntityIdLike, operation: string, input?: unknown): void {
    this.client.signalEntity(entity, operation, input);
  }

  readEntityState(entity: EntityIdLike): { exists: boolean; state: unknown } {
    return this.client.readEntityState(entity);
  }

  /** Entities that exist, by name (all when absent), last operation time, in pages. */
  listEntities(query: EntityQuery = {}): EntityPage {
    return this.client.listEntities(query);
  }

  /** Resolves with the final status once the instance is Completed, Failed or Terminated. */
  waitForCompletion(instanceId: string): Promise<InstanceStatus> {
    return this.client.waitForCompletion(instanceId);
  }

  /** Durable timers armed right now (cancelled ones excluded). */
  pendingTimers(): PendingTimer[] {
    return this.timers.pending();
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
      this.timers.dueCount === 0 &&
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
    this.timers.fireDue();
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
    return functionContext(reg, (line) => this.log(line));
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

  // ------------------------------------------------------------------ timers (timers.ts) and resume (resume.ts)

  private resumeHub(): void {
    resumeHub(this.openStore(), this.taskHubName, {
      markReady: (id) => this.markReady(id),
      enqueueActivity: (work) => this.enqueueActivity(work),
      armTimer: (work) => this.timers.arm(work),
      entityReady: (id) => this.readyEntities.add(id),
      log: (line) => this.log(line),
    });
  }

  private resumeInstance(r: InstanceRecord): void {
    resumeInstance(r, {
      markReady: (id) => this.markReady(id),
      enqueueActivity: (work) => this.enqueueActivity(work),
      armTimer: (work) => this.timers.arm(work),
    });
  }

  /** Disarms an instance's timers (timers.ts) and, unless one timer is meant, its delayed activities. */
  private disarmTimers(instanceId: string, executionId?: string, timerId?: number): void {
    this.timers.disarm(instanceId, executionId, timerId);
    if (timerId === undefined) {
      for (const [key, { handle, work }] of this.delayedActivities) {
        if (work.instanceId !== instanceId) continue;
        if (executionId !== undefined && work.executionId !== executionId) continue;
        handle.cancel();
        this.delayedActivities.delete(key);
      }
    }
  }

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
}

const activityKey = (w: ActivityWork): string => `${w.instanceId}\u0000${w.executionId}\u0000${w.taskId}`;

/** The InvocationContext a durable function is invoked with: its trigger binding, logs through `log`. */
export function functionContext(
  reg: DurableFunctionRegistration,
  log: (line: string) => void,
): InvocationContext {
  const trigger = TRIGGER_TYPES[reg.kind];
  return new InvocationContext({
    invocationId: crypto.randomUUID(),
    functionName: reg.name,
    logHandler: (level, ...args) => log(`[${reg.name}] ${level}: ${format(...args)}`),
    options: { trigger: { type: trigger, name: trigger }, extraInputs: [], extraOutputs: [] },
  });
}
