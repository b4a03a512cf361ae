/**
 * Failure catalogue, the aftermath of an outage: an operator retries or cancels every order a filter matches,
 * dry run first, a page per call, each order moved by its own transition and audited with who and why.
 *
 * One remote call per agent attempt (AGENT_MAX_ATTEMPTS=1) and one Supervisor retry (SUPERVISOR_MAX_FAILURES=1)
 * bring an order to Error in two failed calls, so no service sees the five consecutive failures that would open
 * its circuit breaker (which would refuse the retries below for 10 s). MAX_IN_FLIGHT=2 makes admission control
 * visible: a bulk retry of more orders than that still runs at most two at once.
 */
import { expect } from "vitest";
import { encodeClientPrincipal } from "devhost/auth";
import { BREAKER, orderWorkflowV1, type StateRecord } from "../../src/domain";
import { type E2E, type FaultSpec } from "../support/e2e";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { type QueueLog } from "../support/e2eQueues";
import { faultOn } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const MAX_IN_FLIGHT = 2;
const it = e2eTest({
  AGENT_MAX_ATTEMPTS: "1",
  SUPERVISOR_MAX_FAILURES: "1",
  MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
});

const ada = { name: "ada@contoso.com", id: "oid-ada", roles: ["Orders.Operator"] };
const bob = { name: "bob@contoso.com", id: "oid-bob", roles: ["Orders.Reader"] };

interface BulkAnswer {
  dryRun: boolean;
  matched: number;
  acted: number;
  refused: number;
  sample: string[];
  continuation: string | null;
  remaining: number;
}

const bulkRequest = (
  action: "retry" | "cancel",
  body: unknown,
  as = ada,
  contentType = "application/json",
) => ({
  path: `/api/bulk/${action}`,
  init: {
    method: "POST",
    headers: { "content-type": contentType, ...encodeClientPrincipal(as) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  },
});

const post = (e2e: E2E, ...args: Parameters<typeof bulkRequest>) => {
  const { path, init } = bulkRequest(...args);
  return e2e.api(path, init);
};

/** A 200 answer of a bulk action; anything else fails with the API's words. */
async function bulk(e2e: E2E, action: "retry" | "cancel", body: unknown): Promise<BulkAnswer> {
  const res = await post(e2e, action, body);
  const answer = (await res.json()) as BulkAnswer & { error?: string };
  expect(res.status, answer.error).toBe(200);
  return answer;
}

/** The failing call of each order: each step's of the declared process in turn, so the failures spread over them. */
const FAILING: Array<Pick<FaultSpec, "service" | "operation">> = orderWorkflowV1.steps.map((_, i) =>
  faultOn(i),
);

/** `count` orders parked in Error by a service that keeps failing them, their alerts sent (the last write). */
async function ordersInError(
  e2e: E2E,
  alerts: QueueLog,
  prefix: string,
  count: number,
): Promise<StateRecord[]> {
  // Fewer orders fail on each step (in the sample, on each service) than the distinct orders a breaker opens on.
  expect(Math.ceil(count / FAILING.length), "orders failing on one step").toBeLessThan(
    BREAKER.distinctOrders,
  );
  const orders = Array.from({ length: count }, () => e2eOrder(prefix));
  for (const [i, order] of orders.entries()) {
    await submitWithFaults(e2e, order, { ...FAILING[i % FAILING.length]!, kind: "transient" });
  }
  return Promise.all(
    orders.map(async ({ orderId }) => {
      await alerts.waitFor(forOrder(orderId), 40_000);
      return e2e.waitForRecord(
        orderId,
        (r) => r.processState === "Error" && !!r.alert?.sentAt,
        "Error, alerted",
        40_000,
      );
    }),
  );
}

const newestFirst = (records: StateRecord[]): string[] =>
  [...records]
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.orderId.localeCompare(a.orderId))
    .map((r) => r.orderId);

const states = (e2e: E2E, records: StateRecord[]) => Promise.all(records.map((r) => e2e.state(r.orderId)));

it("refuses a bad body naming the field, a body that is not JSON, and a reader", async ({ e2e }) => {
  for (const [action, body, message] of [
    ["retry", {}, "filter: required: expected an object"],
    ["retry", { filter: { state: "Processing" } }, "filter.state: expected one of Error, CompensationFailed"],
    [
      "cancel",
      { filter: { state: "Compensated" } },
      "filter.state: expected one of Pending, Processing, Error",
    ],
    [
      "retry",
      { filter: { state: "Error", errorCode: "Retries Exhausted" } },
      "filter.errorCode: expected a letter",
    ],
    [
      "retry",
      { filter: { state: "Error", updatedSince: "last Tuesday" } },
      "filter.updatedSince: expected an ISO",
    ],
    ["cancel", { filter: { state: "Error" }, limit: 5000 }, "limit: expected a whole number from 1 to 1000"],
    ["cancel", { filter: { state: "Error" }, reason: "a\u0007b" }, "reason: expected no control characters"],
    [
      "retry",
      { filter: { state: "Error" }, continuation: "bm9wZQ" },
      'continuation: expected the continuation of a previous page of this listing, got "bm9wZQ": not issued by this API (it carries no signature)',
    ],
    [
      "cancel",
      { filter: { state: "Error" }, continuation: `bm9wZQ.${"A".repeat(43)}` },
      "not issued by this API (its signature does not match)",
    ],
    ["retry", { filter: { state: "Error" }, all: true }, 'Unrecognized key: "all"'],
    ["retry", "{not json", "body: expected JSON"],
    ["retry", "", "body: expected JSON"],
  ] as const) {
    const res = await post(e2e, action, body);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(((await res.json()) as { error: string }).error, JSON.stringify(body)).toContain(message);
  }
  const form = await post(e2e, "retry", "filter=Error", ada, "application/x-www-form-urlencoded");
  expect(form.status).toBe(415);
  for (const action of ["retry", "cancel"] as const) {
    const refused = await post(e2e, action, { filter: { state: "Error" }, dryRun: true }, bob);
    expect(refused.status, action).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toBe(
      "bob@contoso.com lacks the role Orders.Operator (roles held: Orders.Reader)",
    );
  }
});

it(
  "a dry run counts the matching orders and changes nothing; the bulk retry moves exactly those, audited, and they finish",
  { timeout: 120_000 },
  async ({ e2e, alerts }) => {
    const fine = [e2eOrder("BULK-FINE"), e2eOrder("BULK-FINE")];
    for (const order of fine) expect((await e2e.submit(order)).status).toBe(202);
    await Promise.all(fine.map((o) => e2e.waitForState(o.orderId, ["Processed"])));
    const failed = await ordersInError(e2e, alerts, "BULK-RETRY", 4);

    // The filter leaves out the order(s) last updated first: updatedSince is inclusive, 1 ms after them.
    const earliest = failed.map((r) => r.updatedAt).sort()[0]!;
    const since = new Date(Date.parse(earliest) + 1).toISOString();
    const matching = failed.filter((r) => r.updatedAt >= since);
    const left = failed.filter((r) => r.updatedAt < since);
    expect(matching.length).toBeGreaterThanOrEqual(2);
    expect(left.length).toBeGreaterThanOrEqual(1);
    const filter = { state: "Error", errorCode: "RetriesExhausted", updatedSince: since };

    const before = await states(e2e, failed);
    const dry = await bulk(e2e, "retry", { filter, dryRun: true });
    expect(dry).toEqual({
      dryRun: true,
      matched: matching.length,
      acted: matching.length,
      refused: 0,
      sample: newestFirst(matching),
      continuation: null,
      remaining: 0,
    });
    expect(
      await bulk(e2e, "retry", { filter: { ...filter, errorCode: "CircuitOpen" }, dryRun: true }),
    ).toMatchObject({
      matched: 0,
      acted: 0,
      sample: [],
      continuation: null,
    });
    expect(await states(e2e, failed)).toEqual(before);

    await e2e.faults.clear();
    const inFlight: number[] = [];
    const sampling = sampleInFlight(e2e, inFlight);
    const retried = await bulk(e2e, "retry", { filter, reason: "payment outage is over" });
    expect(retried).toEqual({ ...dry, dryRun: false });

    const done = await Promise.all(matching.map((r) => e2e.waitForState(r.orderId, ["Processed"], 40_000)));
    sampling.stop();
    await sampling.done;
    for (const record of done) {
      expect(record.failureCount).toBe(0);
      expect(record.history).toContainEqual(
        expect.objectContaining({
          event: "operatorRetry",
          by: "operator:ada@contoso.com (oid-ada)",
          detail: "bulk retry: payment outage is over",
          from: "Error",
          to: "Pending",
        }),
      );
    }
    // Admission control: the starter let at most MAX_IN_FLIGHT run at once, the rest waited in Pending.
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    // What the filter left out is as it was, and a second run finds nothing left to do.
    expect(await states(e2e, left)).toEqual(before.filter((r) => r!.updatedAt < since));
    for (const order of fine) expect((await e2e.state(order.orderId))?.processState).toBe("Processed");
    expect(await bulk(e2e, "retry", { filter })).toMatchObject({ matched: 0, acted: 0, continuation: null });
  },
);

it(
  "a bulk cancel pages through every matching order with the continuation, dry run and for real",
  { timeout: 120_000 },
  async ({ e2e, alerts }) => {
    const since = new Date().toISOString();
    const failed = await ordersInError(e2e, alerts, "BULK-CANCEL", 3);
    await e2e.faults.clear();
    const filter = { state: "Error", errorCode: "RetriesExhausted", updatedSince: since };
    const order = newestFirst(failed);

    const before = await states(e2e, failed);
    const dry1 = await bulk(e2e, "cancel", { filter, dryRun: true, limit: 2 });
    expect(dry1).toMatchObject({ matched: 3, acted: 2, refused: 0, sample: order.slice(0, 2), remaining: 1 });
    expect(dry1.continuation).toEqual(expect.any(String));
    const dry2 = await bulk(e2e, "cancel", {
      filter,
      dryRun: true,
      limit: 2,
      continuation: dry1.continuation,
    });
    expect(dry2).toEqual({
      dryRun: true,
      matched: 3,
      acted: 1,
      refused: 0,
      sample: order.slice(2),
      continuation: null,
      remaining: 0,
    });
    expect(await states(e2e, failed)).toEqual(before);

    const page1 = await bulk(e2e, "cancel", { filter, limit: 2, reason: "customer asked for a refund" });
    expect(page1).toMatchObject({
      dryRun: false,
      matched: 3,
      acted: 2,
      refused: 0,
      sample: order.slice(0, 2),
      remaining: 1,
    });
    const page2 = await bulk(e2e, "cancel", { filter, limit: 2, continuation: page1.continuation });
    // The first page's orders have left Error: one matches now, and it is the one the continuation covers.
    expect(page2).toEqual({
      dryRun: false,
      matched: 1,
      acted: 1,
      refused: 0,
      sample: order.slice(2),
      continuation: null,
      remaining: 0,
    });

    const done = await Promise.all(failed.map((r) => e2e.waitForState(r.orderId, ["Compensated"], 40_000)));
    for (const record of done) {
      const reason = record.orderId === order[2] ? "bulk cancel" : "bulk cancel: customer asked for a refund";
      expect(record.compensationRequest).toMatchObject({
        requestedBy: "operator:ada@contoso.com (oid-ada)",
        reason,
      });
      expect(record.history).toContainEqual(
        expect.objectContaining({ event: "compensationRequested", from: "Error", detail: reason }),
      );
    }
  },
);

/** Samples the in-flight count of /api/stats until stopped: what the remote services were asked to carry at once. */
function sampleInFlight(e2e: E2E, seen: number[]): { stop(): void; done: Promise<void> } {
  let running = true;
  const done = (async () => {
    while (running) {
      const stats = (await (await e2e.api("/api/stats")).json()) as { inFlight: number };
      seen.push(stats.inFlight);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return { stop: () => (running = false), done };
}
