// Durable timers of the engine: the timers an orchestration created (TimerCreated), armed on the engine's
// Clock; when one is due, a TimerFired message goes to its instance's inbox (written to the hub first) and
// the instance is marked ready. Cancelled timers (Task.any losers the code cancelled) are disarmed here.
// The engine composes one DurableTimers and hands it what it needs (clock, hub, dispatch callbacks).
import type { Clock, TimerHandle } from "./clock";
import { EventType, newEvent } from "./history";
import { isTerminal, type StoreOp, type TaskHubStore } from "./store";
import type { DurableHop, PendingTimer, TimerWork } from "./types";

export interface TimerDeps {
  readonly clock: Clock;
  /** The hub if it is open (undefined before start). */
  peekStore(): TaskHubStore | undefined;
  commit(ops: StoreOp[]): void;
  /** True while the engine dispatches work (started, not stopping). */
  started(): boolean;
  markReady(instanceId: string, hop?: DurableHop): void;
  /** Asks the dispatcher to run soon (it then calls fireDue). */
  pump(): void;
}

export class DurableTimers {
  /** Timers that were due when armed, waiting for the dispatcher. */
  private readonly due: TimerWork[] = [];
  private readonly armed = new Map<string, { handle: TimerHandle; work: TimerWork }>();

  constructor(private readonly d: TimerDeps) {}

  /** Timers due now and not yet fired (they count as runnable work). */
  get dueCount(): number {
    return this.due.length;
  }

  arm(work: TimerWork): void {
    const key = timerKey(work.instanceId, work.executionId, work.timerId);
    if (this.armed.has(key)) return;
    const at = new Date(work.fireAt);
    if (at.getTime() <= this.d.clock.now().getTime()) {
      this.due.push(work);
      this.d.pump();
      return;
    }
    const handle = this.d.clock.setTimer(at, () => {
      this.armed.delete(key);
      if (!this.d.started()) return;
      this.fire(work);
    });
    this.armed.set(key, { handle, work });
  }

  /** Disarms an instance's timers: all of them, those of one execution, or one timer. */
  disarm(instanceId: string, executionId?: string, timerId?: number): void {
    for (const [key, { handle, work }] of this.armed) {
      if (work.instanceId !== instanceId) continue;
      if (executionId !== undefined && work.executionId !== executionId) continue;
      if (timerId !== undefined && work.timerId !== timerId) continue;
      handle.cancel();
      this.armed.delete(key);
    }
    for (let i = this.due.length - 1; i >= 0; i--) {
      const w = this.due[i] as TimerWork;
      if (w.instanceId === instanceId && (timerId === undefined || w.timerId === timerId))
        this.due.splice(i, 1);
    }
  }

  /** Fires every timer that was due when it was armed (the dispatcher calls this). */
  fireDue(): void {
    while (this.due.length) this.fire(this.due.shift() as TimerWork);
  }

  /** Cancels every armed timer (the engine is stopping). */
  cancelAll(): void {
    for (const { handle } of this.armed.values()) handle.cancel();
    this.armed.clear();
  }

  /** Durable timers armed right now (cancelled ones excluded). */
  pending(): PendingTimer[] {
    return [...this.armed.values(), ...this.due.map((work) => ({ work }))].map(({ work }) => ({
      instanceId: work.instanceId,
      timerId: work.timerId,
      fireAt: new Date(work.fireAt),
    }));
  }

  private fire(work: TimerWork): void {
    const r = this.d.peekStore()?.instances.get(work.instanceId);
    if (!r || r.executionId !== work.executionId || isTerminal(r.runtimeStatus)) return;
    if (r.cancelledTimers.includes(work.timerId)) return;
    if (r.inbox.some((e) => e.EventType === EventType.TimerFired && e.TimerId === work.timerId)) return;
    const at = new Date(Math.max(this.d.clock.now().getTime(), Date.parse(work.fireAt)));
    const event = newEvent(EventType.TimerFired, at, { TimerId: work.timerId, FireAt: work.fireAt });
    this.d.commit([{ k: "patchInstance", id: work.instanceId, deliver: [event] }]);
    this.d.markReady(work.instanceId, "timerFired");
  }
}

const timerKey = (instanceId: string, executionId: string, timerId: number): string =>
  `${instanceId}\u0000${executionId}\u0000${timerId}`;
