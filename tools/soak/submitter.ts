/**
 * Submits orders through the app's front door (POST /api/orders) the way a client should: a refused connection
 * (the app is down or restarting) or a 5xx is retried with the same order, and 429 waits for Retry-After.
 * Only a 202 counts as accepted; the time of each acceptance is kept for the invariants and the figures.
 */
import type { Order } from "../../src/domain/order";

export interface SubmitTarget {
  /** The app's base URL now, or undefined while it is down. */
  url(): string | undefined;
}

export interface Acceptance {
  orderId: string;
  /** Epoch ms of the first POST. */
  submittedAt: number;
  /** Epoch ms of the 202. */
  acceptedAt: number;
  /** Requests it took, the 202 included. */
  requests: number;
}

export class SubmitError extends Error {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** POSTs one order until the front door accepts it (202); a 400 or 409 is a bug in the caller: thrown. */
export async function submitUntilAccepted(
  target: SubmitTarget,
  order: Order,
  timeoutMs = 120_000,
): Promise<Acceptance> {
  const submittedAt = Date.now();
  const deadline = submittedAt + timeoutMs;
  let requests = 0;
  for (;;) {
    if (Date.now() > deadline) throw new SubmitError(`${order.orderId}: not accepted within ${timeoutMs} ms`);
    const url = target.url();
    if (!url) {
      await sleep(100);
      continue;
    }
    requests++;
    let response: Response;
    try {
      response = await fetch(`${url}/api/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(order),
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      await sleep(200); // killed mid-request or not listening yet: the same order again
      continue;
    }
    const text = await response.text().catch(() => "");
    if (response.status === 202)
      return { orderId: order.orderId, submittedAt, acceptedAt: Date.now(), requests };
    if (response.status === 429) {
      await sleep(Number(response.headers.get("retry-after") ?? "1") * 1000);
      continue;
    }
    if (response.status >= 500) {
      await sleep(200);
      continue;
    }
    throw new SubmitError(`${order.orderId}: HTTP ${response.status} ${text}`);
  }
}

/** Submits `orders` with `concurrency` requests at a time, optionally no faster than `perSecond`. */
export async function submitAll(
  target: SubmitTarget,
  orders: readonly Order[],
  opts: { concurrency?: number; perSecond?: number; onAccepted?: (a: Acceptance) => void } = {},
): Promise<Acceptance[]> {
  const accepted: Acceptance[] = [];
  const started = Date.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < orders.length) {
      const index = next++;
      if (opts.perSecond) {
        const due = started + (index * 1000) / opts.perSecond;
        if (due > Date.now()) await sleep(due - Date.now());
      }
      const acceptance = await submitUntilAccepted(target, orders[index]!);
      accepted.push(acceptance);
      opts.onAccepted?.(acceptance);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));
  return accepted;
}
