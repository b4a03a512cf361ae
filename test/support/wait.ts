/**
 * Waiting in tests: for something another process (or the app's own timers) makes true, polled with vi.waitFor,
 * and for a moment on the wall clock.
 */
import { vi } from "vitest";

export interface PollOptions {
  timeoutMs: number;
  /** Pause between reads; a read still running when it ends is not overlapped by the next one. */
  intervalMs?: number;
}

/**
 * Reads until `done` holds for what was read, and resolves with that value. On timeout it fails with
 * `failure(last value read)`, so that the message says what was seen, not only that time ran out.
 */
export function pollUntil<T, U extends T>(
  read: () => Promise<T> | T,
  done: (value: T) => value is U,
  failure: (last: T) => string,
  options: PollOptions,
): Promise<U>;
export function pollUntil<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  failure: (last: T) => string,
  options: PollOptions,
): Promise<T>;
export function pollUntil<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  failure: (last: T) => string,
  { timeoutMs, intervalMs = 100 }: PollOptions,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (!done(value)) throw new Error(failure(value));
      return value;
    },
    { timeout: timeoutMs, interval: intervalMs },
  );
}

/** Resolves once the wall clock (the app's clock too, when it runs in this process) is past `iso`. */
export async function waitUntilPast(iso: string): Promise<void> {
  const ms = new Date(iso).getTime() - Date.now() + 50;
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}
