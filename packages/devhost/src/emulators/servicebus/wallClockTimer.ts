/**
 * A one-shot timer for an absolute wall-clock time, however far away. It never fires before `atMs` by
 * Date.now() (Node's timers run on a monotonic clock and can be a millisecond early by the wall
 * clock, and a scheduled message must never show an enqueued time before its schedule). Long waits
 * are chained: setTimeout fires at once past 2^31-1 ms (24.8 days), and a TTL can be P10675199D.
 * Timers are unref'd: the listening socket is what keeps a process alive, never a message's deadline.
 */
import type { Clock } from "../../durable/clock";

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The emulator's time source: the wall clock by default, or a host's clock (time-skipping). */
export type EmulatorClock = Pick<Clock, "now" | "setTimer">;

export interface Deadline {
  cancel(): void;
}

export function deadlineAt(atMs: number, fire: () => void, clock?: EmulatorClock): Deadline {
  if (clock) return clock.setTimer(new Date(atMs), fire);
  let handle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const wait = atMs - Date.now();
    handle = setTimeout(wait > 0 ? arm : fire, Math.min(Math.max(wait, 0), MAX_TIMEOUT_MS));
    handle.unref();
  };
  arm();
  return { cancel: () => clearTimeout(handle) };
}
