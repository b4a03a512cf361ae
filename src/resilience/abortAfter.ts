/** What this needs of a caller's signal: the DOM's AbortSignal and the Azure SDKs' AbortSignalLike both fit. */
export interface OuterSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export interface AbortAfter {
  /** Aborts when `outer` does (with its reason) or when the time is up (with `timeoutReason`), whichever is first. */
  readonly signal: AbortSignal;
  /** Whether the time ran out before `outer` aborted: the cut was this timer's, not the caller's. */
  timedOut(): boolean;
  /** Clears the timer and lets go of `outer`: call it once the work is over, whatever its end. */
  done(): void;
}

/**
 * A signal for one try of some work: the caller's `outer` signal, or an abort `ms` from now if that comes first.
 *
 * Not `AbortSignal.any` with `AbortSignal.timeout`: in Node.js (a known defect of `AbortSignal.any`) the timeout
 * signal can be collected before it fires when only the combined signal refers to it, and the work then outlives
 * its time (a test that cuts a remote call at its deadline failed two runs in eight that way). Here the timer holds
 * the controller until it fires or `done` clears it.
 */
export function abortAfter(
  outer: OuterSignal | undefined,
  ms: number,
  timeoutReason?: () => unknown,
): AbortAfter {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(timeoutReason?.());
  }, ms);
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener("abort", forward, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut && !outer?.aborted,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", forward);
    },
  };
}
