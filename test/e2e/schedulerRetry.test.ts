/**
 * Azure readiness: a transient error at a step of the Scheduler (a Cosmos DB or Service Bus call refused while a
 * fresh deployment's role assignments propagate, say), or a process that dies between recording the order's end
 * and telling the orchestration, is retried inside the attempt instead of failing it and costing a Supervisor
 * retry. The app runs with the Scheduler failing once at each step (test/support/apps/order-app-flaky-scheduler);
 * the activities' own retries are tested on the virtual clock (test/integration/scheduler/orchestration.test.ts).
 */
import { expect } from "vitest";
import { ACTIVITY_RETRY, ATTEMPT_ENDED_EVENT } from "../../src/domain";
import { e2eOrder, expectOneSetOfEffects } from "../support/e2eOrders";
import { orderAppVariant, submitTo } from "../support/e2eChild";
import { childStackTest as it } from "../support/fixtures";

it("a step that fails once is retried: Processed on attempt 1, no failure counted, each effect once, no alert", async ({
  stack,
}) => {
  expect(ACTIVITY_RETRY.maxAttempts).toBeGreaterThan(1);
  const app = await stack.startApp({ appEntry: orderAppVariant("order-app-flaky-scheduler") });
  const order = e2eOrder("SCHED-RETRY");
  expect((await submitTo(app, order)).status).toBe(202);

  const record = await stack.waitForState(order.orderId, ["Processed"], 60_000);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0 });
  expect(record.history.map((h) => h.event)).not.toContain("expired");
  // Each side effect once.
  await expectOneSetOfEffects(stack, order.orderId);
  // The faults really happened: the event of the order's end failed once, after the end was recorded (the record
  // says Processed all the same; the orchestration learns it at its timer). The first step was dispatched by the
  // starter with the claim, every answer recorded in the reply path and only the end raised, so no Scheduler
  // activity ran.
  const instanceId = `${order.orderId}:1`;
  const failures = app.output().match(new RegExp(`flaky: \\w+:${order.orderId}[^ ]* fails`, "g")) ?? [];
  expect(new Set(failures)).toEqual(
    new Set([`flaky: raiseEvent:${instanceId}:${ATTEMPT_ENDED_EVENT} fails`]),
  );
  expect(await stack.drain("alerts")).toEqual([]);
}, 90_000);
