/** Rounds one invocation runs back to back for others before it returns, so that no invocation runs for ever. */
export const MAX_ROUNDS_PER_RUNNER = 20;

/**
 * At most one claim round at a time in this process. Every submission asks for a round (the fast path), so under
 * load many ask at once; a round already running may have read the claimable orders before the newest arrived, so
 * an ask that comes while one runs makes the invocation running it do one more round when it ends, and returns at
 * once. No ask is lost, no work runs after the invocation doing it has returned, and the askers do not wait for
 * each other. Across instances rounds do run at once; the admission places keep them within MAX_IN_FLIGHT.
 */
export class RoundCoalescer<T> {
  private running = false;
  private again = false;

  /** The last round's result when this call ran the rounds; undefined when it left them to the running one. */
  async run(round: () => Promise<T>): Promise<T | undefined> {
    if (this.running) {
      this.again = true;
      return undefined;
    }
    this.running = true;
    try {
      let result: T;
      let rounds = 0;
      do {
        this.again = false;
        result = await round();
        rounds++;
      } while (this.again && rounds < MAX_ROUNDS_PER_RUNNER);
      return result;
    } finally {
      this.running = false;
    }
  }
}
