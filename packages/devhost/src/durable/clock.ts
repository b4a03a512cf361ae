// Time sources for the durable engine. Orchestrations only ever see time through the engine (the
// OrchestratorStarted timestamps it writes), so swapping the clock lets tests skip hours of durable timers
// in milliseconds while production-like runs use wall-clock time.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  now(): Date;
  /** Calls `fn` once when the clock reaches `at` (never earlier). */
  setTimer(at: Date, fn: () => void): TimerHandle;
}

/** Lets a clock wait until the work its timers caused has settled (VirtualClock only). */
export interface Quiescer {
  (): Promise<void>;
}

// setTimeout cannot wait longer than 2^31-1 ms (~24.8 days); longer waits are chained.
const MAX_TIMEOUT_MS = 2_147_483_647;

export class RealClock implements Clock {
  now(): Date {
    return new Date();
  }

  setTimer(at: Date, fn: () => void): TimerHandle {
    let handle: NodeJS.Timeout | undefined;
    let cancelled = false;
    const arm = (): void => {
      const wait = at.getTime() - Date.now();
      if (wait <= 0) {
        handle = setTimeout(() => {
          if (!cancelled) fn();
        }, 0);
      } else {
        handle = setTimeout(arm, Math.min(wait, MAX_TIMEOUT_MS));
      }
      // A pending durable timer must not keep a process alive on its own: the host's servers do that, and
      // the timer is persisted anyway.
      handle.unref();
    };
    arm();
    return {
      cancel: () => {
        cancelled = true;
        if (handle) clearTimeout(handle);
      },
    };
  }
}

interface VirtualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. `advance`/`advanceTo` fire due timers in time order, setting the
 * clock to each timer's time as it fires and letting attached engines settle between timers, so a chain of
 * timers (timer → activity → next timer) plays out exactly as it would in real time.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, VirtualTimer>();
  private readonly quiescers = new Set<Quiescer>();

  constructor(start: Date | string | number = Date.now()) {
    const ms = new Date(start).getTime();
    if (Number.isNaN(ms)) throw new Error(`VirtualClock: start time ${String(start)} is not a valid date`);
    this.current = ms;
  }

  now(): Date {
    return new Date(this.current);
  }

  setTimer(at: Date, fn: () => void): TimerHandle {
    const id = this.seq++;
    this.timers.set(id, { at: at.getTime(), seq: id, fn });
    return { cancel: () => void this.timers.delete(id) };
  }

  /** The time of the earliest pending timer, if any. */
  nextTimerAt(): Date | undefined {
    const next = this.earliest();
    return next ? new Date(next.at) : undefined;
  }

  pendingTimerCount(): number {
    return this.timers.size;
  }

  /** Registers a function the clock awaits before and after firing each timer; returns a detach function. */
  attach(quiesce: Quiescer): () => void {
    this.quiescers.add(quiesce);
    return () => void this.quiescers.delete(quiesce);
  }

  /** Moves time forward by `ms`, firing every timer due on the way. */
  advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new Error(`VirtualClock.advance: expected a non-negative number of ms, got ${ms}`);
    return this.advanceTo(new Date(this.current + ms));
  }

  async advanceTo(target: Date): Promise<void> {
    const end = target.getTime();
    await this.settle();
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > end) break;
      this.timers.delete(next.seq);
      this.current = Math.max(this.current, next.at);
      next.fn();
      await this.settle();
    }
    this.current = Math.max(this.current, end);
    await this.settle();
  }

  private earliest(): VirtualTimer | undefined {
    let best: VirtualTimer | undefined;
    for (const t of this.timers.values()) {
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }

  private async settle(): Promise<void> {
    for (const q of [...this.quiescers]) await q();
  }
}
