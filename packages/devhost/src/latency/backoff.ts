// How the Durable Functions Azure Storage provider polls one of its queues (a control queue or the work-item
// queue), as DurableTask.AzureStorage does it (TaskHubQueue and BackoffPollingHelper): when a poll finds a
// message it polls again at once; when a poll finds none it waits, and each further empty poll waits longer:
// min, then min + r·min, min + r·2·min, min + r·4·min, ... (r drawn from [0.8, 1.2]) up to the maximum,
// maxQueuePollingInterval in host.json (default 30 s). A message that arrives on an idle queue is therefore
// found by the next poll, up to the current back-off later. The model runs on the times it is given (the
// engine's clock), so it needs no timer of its own.
import type { Rng } from "./random";

export interface PollerOptions {
  /** The shortest wait after an empty poll (the provider's 50 ms). */
  minIntervalMs: number;
  /** maxQueuePollingInterval. */
  maxIntervalMs: number;
  /** How far each increment is randomized either way (the provider's 0.2). */
  randomization: number;
  /** Draws the randomization factors. */
  rng: Rng;
  /** When the poller starts (and polls first). */
  startAt: number;
}

export class QueuePoller {
  readonly #options: PollerOptions;
  /** When the next poll happens; it finds whatever is visible by then. */
  #nextPollAt: number;
  /** When the poll before it happened. */
  #previousPollAt: number;
  /** The wait after the next empty poll (BackoffPollingHelper's CurrentInterval). */
  #interval = 0;
  #exponent = 0;

  constructor(options: PollerOptions) {
    if (!(options.minIntervalMs > 0) || options.maxIntervalMs < options.minIntervalMs) {
      throw new Error(
        `QueuePoller: need 0 < minIntervalMs <= maxIntervalMs (got ${options.minIntervalMs}, ${options.maxIntervalMs})`,
      );
    }
    this.#options = options;
    this.#nextPollAt = options.startAt;
    this.#previousPollAt = options.startAt;
  }

  /** The wait after the next empty poll, as it stands. */
  get currentIntervalMs(): number {
    return this.#interval;
  }

  get nextPollAt(): number {
    return this.#nextPollAt;
  }

  /**
   * A message becomes visible on the queue at `visibleAt`: returns when a poll finds it, and the wait that
   * poll ended (the back-off the message met). Empty polls before then grow the back-off; the poll that finds
   * the message resets it, as the provider's poller does.
   */
  find(visibleAt: number): { at: number; backoffMs: number } {
    const max = this.#options.maxIntervalMs;
    while (this.#nextPollAt < visibleAt) {
      this.#previousPollAt = this.#nextPollAt;
      if (this.#interval === max) {
        // At the maximum every wait is the same: jump over the empty polls of a long idle stretch at once.
        const waits = Math.ceil((visibleAt - this.#nextPollAt) / max);
        this.#previousPollAt = this.#nextPollAt + (waits - 1) * max;
        this.#nextPollAt += waits * max;
        break;
      }
      this.#nextPollAt += this.#waitAfterEmptyPoll();
    }
    const found = this.#nextPollAt;
    const backoffMs = found - this.#previousPollAt;
    // A poll that found a message polls again at once, and the next empty poll waits the minimum.
    this.#interval = this.#options.minIntervalMs;
    this.#exponent = 1;
    this.#previousPollAt = found;
    return { at: found, backoffMs };
  }

  /** The poller starts afresh at `at` (a new instance of the app, after a cold start). */
  restart(at: number): void {
    this.#nextPollAt = at;
    this.#previousPollAt = at;
    this.#interval = 0;
    this.#exponent = 0;
  }

  /** Waits the current interval, then grows it (RandomizedExponentialBackoffStrategy.UpdateDelay(false)). */
  #waitAfterEmptyPoll(): number {
    const { minIntervalMs: min, maxIntervalMs: max, randomization, rng } = this.#options;
    const wait = this.#interval;
    let next = min;
    if (this.#exponent > 0) {
      next += rng.uniform(1 - randomization, 1 + randomization) * 2 ** (this.#exponent - 1) * min;
    }
    if (next < max) {
      this.#interval = next;
      this.#exponent++;
    } else {
      this.#interval = max;
    }
    // An interval of 0 (a poller that has just started) polls again at once; that poll counts as empty too.
    return wait;
  }
}
