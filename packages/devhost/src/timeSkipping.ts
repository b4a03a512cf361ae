// Time-skipping (docs/time-skipping.md): one clock for the whole host, wall time plus an offset that jumps
// forward whenever the host is idle, so that durable timers, timer triggers and the emulator's scheduled
// messages, lock and TTL deadlines come due in milliseconds instead of hours. Waits are real setTimeouts for the
// remaining wall time, re-armed whenever the offset jumps; nothing else of the process's timers is faked, so
// sockets and SDK timeouts keep real time.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Clock, TimerHandle } from "./durable/clock";

// Captured at load: the Date shim below replaces globalThis.Date, and the clock must keep reading the real one.
const RealDate = globalThis.Date;
const realNow = RealDate.now.bind(RealDate);

// setTimeout cannot wait longer than 2^31-1 ms (~24.8 days); longer waits are chained.
const MAX_TIMEOUT_MS = 2_147_483_647;

interface HostTimer {
  at: number;
  seq: number;
  fn: () => void;
  handle?: NodeJS.Timeout;
}

/** Says whether some part of the host has work running or ready right now. */
export type BusyProbe = () => boolean;

/** A clock others can report their own work to, so a skipper knows when they are idle. */
export interface BusyReporting {
  addBusyProbe(probe: BusyProbe): () => void;
}

/**
 * Wall time plus an offset. `setTimer` waits in real time for what remains of the wait; `skipTo` moves the
 * offset forward (never back) and re-arms every timer, so the ones now due fire at once, in time order.
 */
export class HostClock implements Clock, BusyReporting {
  private offsetMs = 0;
  private seq = 0;
  private readonly timers = new Map<number, HostTimer>();
  private readonly probes = new Set<BusyProbe>();

  /** `start`: the virtual time to begin at; default now. */
  constructor(start?: Date | number) {
    if (start !== undefined) {
      const ms = new RealDate(start).getTime();
      if (Number.isNaN(ms)) throw new Error(`HostClock: start time ${String(start)} is not a valid date`);
      this.offsetMs = ms - realNow();
    }
  }

  nowMs(): number {
    return realNow() + this.offsetMs;
  }

  now(): Date {
    return new RealDate(this.nowMs());
  }

  /** How far the clock is ahead of the wall clock. */
  get skippedMs(): number {
    return this.offsetMs;
  }

  setTimer(at: Date, fn: () => void): TimerHandle {
    const timer: HostTimer = { at: at.getTime(), seq: this.seq++, fn };
    this.timers.set(timer.seq, timer);
    this.arm(timer);
    return {
      cancel: () => {
        if (timer.handle) clearTimeout(timer.handle);
        this.timers.delete(timer.seq);
      },
    };
  }

  /** The earliest pending timer's time (ms), if any. */
  nextTimerAt(): number | undefined {
    let best: number | undefined;
    for (const timer of this.timers.values()) if (best === undefined || timer.at < best) best = timer.at;
    return best;
  }

  pendingTimerCount(): number {
    return this.timers.size;
  }

  /** Moves the clock forward to `at` (ms or Date); timers due by then fire in time order. Never goes back. */
  skipTo(at: number | Date): void {
    const target = typeof at === "number" ? at : at.getTime();
    const jump = target - this.nowMs();
    if (!(jump > 0)) return;
    this.offsetMs += jump;
    const ordered = [...this.timers.values()].sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const timer of ordered) {
      if (timer.handle) clearTimeout(timer.handle);
      this.arm(timer);
    }
  }

  addBusyProbe(probe: BusyProbe): () => void {
    this.probes.add(probe);
    return () => void this.probes.delete(probe);
  }

  /** True when any registered part of the host has work running or ready. */
  isBusy(): boolean {
    for (const probe of this.probes) if (probe()) return true;
    return false;
  }

  private arm(timer: HostTimer): void {
    const wait = timer.at - this.nowMs();
    if (wait <= 0) {
      // Same-delay timeouts run in the order they were set: skipTo arms due timers in time order.
      timer.handle = setTimeout(() => this.fire(timer), 0);
    } else {
      timer.handle = setTimeout(() => this.arm(timer), Math.min(wait, MAX_TIMEOUT_MS));
    }
    // A pending deadline never keeps the process alive on its own: the host's servers do that.
    timer.handle.unref();
  }

  private fire(timer: HostTimer): void {
    if (!this.timers.delete(timer.seq)) return;
    timer.fn();
  }
}

/** Tells whether a value is a clock that takes busy probes (the host's HostClock does). */
export function reportsBusy(clock: unknown): clock is BusyReporting {
  return typeof (clock as Partial<BusyReporting> | undefined)?.addBusyProbe === "function";
}

export interface TimeSkipperOptions {
  /** How long the host must stay idle, in real ms, before the clock jumps; default 25. */
  settleMs?: number;
  /** How often idleness is checked, in real ms; default 5. */
  pollMs?: number;
  /** Called after each jump (logging). */
  onSkip?: (fromMs: number, toMs: number) => void;
}

/**
 * Jumps a HostClock to its next timer whenever nothing in the host is busy (every probe says idle) for a short
 * real settle period, which lets replies to real I/O arrive before time moves on.
 */
export class TimeSkipper {
  private readonly settleMs: number;
  private readonly pollMs: number;
  private idleSince: number | undefined;
  private interval: NodeJS.Timeout | undefined;
  private skips = 0;

  constructor(
    private readonly clock: HostClock,
    private readonly options: TimeSkipperOptions = {},
  ) {
    this.settleMs = options.settleMs ?? 25;
    this.pollMs = options.pollMs ?? 5;
  }

  /** How many jumps the skipper made. */
  get skipCount(): number {
    return this.skips;
  }

  start(): void {
    if (this.interval) return;
    this.interval = setInterval(() => this.check(), this.pollMs);
    this.interval.unref();
  }

  stop(): void {
    if (this.interval) clearInterval(this.interval);
    this.interval = undefined;
  }

  /** One look at the host: jumps when it has been idle long enough and a timer lies ahead. Exposed for tests. */
  check(realNowMs: number = performance.now()): boolean {
    if (this.clock.isBusy()) {
      this.idleSince = undefined;
      return false;
    }
    const next = this.clock.nextTimerAt();
    const from = this.clock.nowMs();
    if (next === undefined || next <= from) {
      // Nothing ahead, or a timer due already (about to fire): no reason to move.
      this.idleSince = undefined;
      return false;
    }
    if (this.idleSince === undefined) {
      this.idleSince = realNowMs;
      return false;
    }
    if (realNowMs - this.idleSince < this.settleMs) return false;
    this.idleSince = undefined;
    this.clock.skipTo(next);
    this.skips++;
    this.options.onSkip?.(from, next);
    return true;
  }
}

// ------------------------------------------------------------------------------------------ the app's time

/** The clock of the invocation running in this async context, if its host skips time. */
const appClock = new AsyncLocalStorage<HostClock>();

/** Runs `fn` (an invocation) so that Date.now() and `new Date()` in it, and in all it starts, read `clock`. */
export function runInAppTime<T>(clock: HostClock, fn: () => T): T {
  return appClock.run(clock, fn);
}

let shimUsers = 0;
let installedShim: DateConstructor | undefined;

function shimmedNow(): number {
  const clock = appClock.getStore();
  return clock ? clock.nowMs() : realNow();
}

/**
 * Replaces globalThis.Date with one whose Date.now() and argument-less `new Date()`/`Date()` read the clock of
 * the invocation running (runInAppTime), and the wall clock elsewhere; everything else is the real Date (same
 * prototype, so instanceof and subclasses keep working). Reference-counted; the returned function restores it.
 */
export function installDateShim(): () => void {
  if (shimUsers++ === 0) {
    const shim = new Proxy(RealDate, {
      construct(target, args: unknown[], newTarget: NewableFunction) {
        return Reflect.construct(target, args.length === 0 ? [shimmedNow()] : args, newTarget) as object;
      },
      apply() {
        return new RealDate(shimmedNow()).toString();
      },
      get(target, property, receiver) {
        if (property === "now") return shimmedNow;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    installedShim = shim;
    globalThis.Date = shim;
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (--shimUsers === 0) {
      if (globalThis.Date === installedShim) globalThis.Date = RealDate;
      installedShim = undefined;
    }
  };
}
