import type { StateStore } from "../store/stateStore";
import { waitAtMost } from "../resilience/waitAtMost";

/**
 * How long the front door trusts its last count of the Pending backlog. The count is a cross-partition query; made
 * on every POST it would be the costliest request an order makes. The 429 over MAX_PENDING_BACKLOG is
 * back-pressure, not a hard limit, so a count up to this old is good enough: in a burst the backlog can pass the
 * bound by what one instance accepts in this time.
 */
export const BACKLOG_CACHE_MS = 1_000;

/**
 * How long a request waits for a count in progress when it has an older one to answer with. Requests that arrive
 * while a count runs share it; were the count stalled (a store fault), every POST would wait with it.
 */
export const BACKLOG_WAIT_MS = 250;

/**
 * The Pending backlog as the front door sees it: counted at most once per BACKLOG_CACHE_MS per instance. A request
 * that finds the count old starts the next one (or joins the one running) and waits for it at most
 * BACKLOG_WAIT_MS, then answers with the last count (0 before the first): a slow or stalled count holds up no
 * request. A count that fails answers the same way: the 429 is back-pressure, and refusing orders because the
 * count failed would turn a store blip into refused submissions (the order's own write then says whether the
 * store answers).
 */
export class BacklogGauge {
  private last: { count: number; at: number } | undefined;
  private counting: Promise<number> | undefined;

  constructor(
    private readonly states: Pick<StateStore, "count">,
    private readonly now: () => Date,
  ) {}

  async pending(): Promise<number> {
    const at = this.now().getTime();
    const last = this.last;
    if (last && at - last.at >= 0 && at - last.at < BACKLOG_CACHE_MS) return last.count;
    this.counting ??= this.states
      .count(["Pending"])
      .then((count) => {
        this.last = { count, at };
        return count;
      })
      .catch(() => this.last?.count ?? 0)
      .finally(() => {
        this.counting = undefined;
      });
    // Before any count (a new instance), a stalled first count answers 0: unknown is not over the bound.
    return waitAtMost(this.counting, BACKLOG_WAIT_MS, last?.count ?? 0);
  }
}
