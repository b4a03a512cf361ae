/**
 * Work-conserving admission: when an order finishes, its place under MAX_IN_FLIGHT goes to the next due order at
 * once, not at the starter's next tick, and MAX_IN_FLIGHT still holds at every moment. The starter's timer is set
 * to once a minute here, so only the hand-over can explain a backlog that drains in seconds.
 */
import { expect } from "vitest";
import type { StateRecord } from "../../src/domain";
import { e2eOrder } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";

const MAX_IN_FLIGHT = 2;
const it = e2eTest({ STARTER_SCHEDULE: "0 * * * * *", MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) });

/** [claimed, finished] of each attempt, from the audit trail: the time the record was held. */
function heldIntervals(record: StateRecord): Array<[number, number]> {
  const intervals: Array<[number, number]> = [];
  let claimedAt: number | undefined;
  for (const h of record.history) {
    if (h.event === "claimed") claimedAt = Date.parse(h.at);
    else if (claimedAt !== undefined && (h.to === "Processed" || h.to === "Pending" || h.to === "Error")) {
      intervals.push([claimedAt, Date.parse(h.at)]);
      claimedAt = undefined;
    }
  }
  return intervals;
}

it("a backlog drains as orders finish, never more than MAX_IN_FLIGHT at once, without waiting for the starter's tick", async ({
  e2e,
}) => {
  const orders = Array.from({ length: 8 }, () => e2eOrder("ADMIT"));
  const started = Date.now();
  await Promise.all(orders.map(async (o) => expect((await e2e.submit(o)).status).toBe(202)));
  const records = await Promise.all(orders.map((o) => e2e.waitForState(o.orderId, ["Processed"], 40_000)));
  // Four rounds of two orders, each a second or so. Without the hand-over, the six orders the submissions' fast
  // path could not admit would wait for three ticks of the starter: three minutes.
  expect(Date.now() - started).toBeLessThan(30_000);

  // At no moment were more than MAX_IN_FLIGHT orders held.
  const edges = records
    .flatMap(heldIntervals)
    .flatMap(([from, to]) => [
      [from, +1],
      [to, -1],
    ])
    .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let held = 0;
  let most = 0;
  for (const [, delta] of edges) {
    held += delta!;
    most = Math.max(most, held);
  }
  expect(most).toBe(MAX_IN_FLIGHT);
});
