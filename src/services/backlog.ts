import type { StateStore } from "./stateStore";

/**
 * How long the front door trusts its last count of the Pending backlog. The count is a cross-partition query; made
 * on every POST it would be the costliest request an order makes. The 429 over MAX_PENDING_BACKLOG is
 * back-pressure, not a hard limit, so a count up to this old is good enough: in a burst the backlog can pass the
 * bound by what one instance accepts in this time.
 */
export const BACKLOG_CACHE_MS = 1_000;

/** The Pending backlog as the front door sees it: counted at most once per BACKLOG_CACHE_MS per instance. */
export class BacklogGauge {
  private last: { count: number; at: number } | undefined;
  private counting: Promise<number> | undefined;

  constructor(
    private readonly states: Pick<StateStore, "count">,
    private readonly now: () => Date,
  ) {}

  async pending(): Promise<number> {
    const at = this.now().getTime();
    if (this.last && at - this.last.at >= 0 && at - this.last.at < BACKLOG_CACHE_MS) return this.last.count;
    // Requests that arrive while a count runs share it.
    this.counting ??= this.states
      .count(["Pending"])
      .then((count) => {
        this.last = { count, at };
        return count;
      })
      .finally(() => {
        this.counting = undefined;
      });
    return this.counting;
  }
}
