/**
 * The front door's back-pressure against the real stores on the local stack: at MAX_PENDING_BACKLOG Pending orders,
 * POST /api/orders answers 429 with Retry-After and stores nothing; the backlog is counted at most once per
 * BACKLOG_CACHE_MS per instance (a cross-partition query on every POST would be an order's costliest request).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitOrderRequest } from "../../../src/api/orders";
import { orderWorkflowV1 } from "../../../src/domain";
import { BACKLOG_CACHE_MS, BacklogGauge } from "../../../src/coordination/backlog";
import { pendingRecord, sampleOrder } from "../../support/domain";
import { startAppStack, type AppStack } from "../../support/appStack";
import { orderPost } from "../../support/httpRequests";

let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack({ MAX_PENDING_BACKLOG: "2" });
});
afterAll(() => stack?.stop());

describe("POST /api/orders at MAX_PENDING_BACKLOG", () => {
  it("answers 429 with Retry-After, naming the setting, and stores nothing; once the backlog drains it accepts", async () => {
    let clock = new Date("2026-12-01T10:00:00.000Z");
    const deps = { ...stack.deps, backlog: new BacklogGauge(stack.deps.states, () => clock) };
    const waiting = ["WAIT-1", "WAIT-2"];
    for (const orderId of waiting)
      await deps.states.create(pendingRecord(sampleOrder({ orderId }), orderWorkflowV1));

    const refused = await submitOrderRequest(
      deps,
      orderPost(sampleOrder({ orderId: "OVER-1" })),
      stack.context("httpApi-submitOrder"),
    );
    expect(refused.status).toBe(429);
    expect(refused.headers).toMatchObject({ "retry-after": "10" });
    expect((refused.jsonBody as { error: string }).error).toContain("at or over MAX_PENDING_BACKLOG=2");
    expect(await deps.orders.get("OVER-1")).toBeUndefined();

    // The backlog drains (the orders finish); within BACKLOG_CACHE_MS the front door still answers from its count.
    for (const orderId of waiting) {
      const record = (await deps.states.get(orderId))!;
      await deps.states.replace({ ...record, processState: "Processed" });
    }
    clock = new Date(clock.getTime() + BACKLOG_CACHE_MS - 1);
    const submitOver2 = async () =>
      (
        await submitOrderRequest(
          deps,
          orderPost(sampleOrder({ orderId: "OVER-2" })),
          stack.context("httpApi-submitOrder"),
        )
      ).status;
    expect(await submitOver2()).toBe(429);
    clock = new Date(clock.getTime() + 1);
    expect(await submitOver2()).toBe(202);
    expect(await deps.orders.get("OVER-2")).toMatchObject({ orderId: "OVER-2" });
  });
});
