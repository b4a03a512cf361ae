/**
 * Azure readiness: a transient error in a Scheduler activity (a Cosmos DB or Service Bus call refused while a
 * fresh deployment's role assignments propagate, say) is retried inside the attempt by the activity's retry
 * policy, instead of failing the orchestration and costing a Supervisor retry. The app runs with every Scheduler
 * activity failing its first execution per order (test/support/apps/order-app-flaky-activities).
 */
import { expect } from "vitest";
import { ACTIVITY_RETRY } from "../../src/domain";
import { e2eOrder, expectOneSetOfEffects } from "../support/e2eOrders";
import { orderAppVariant, submitTo } from "../support/e2eChild";
import { childStackTest as it } from "../support/fixtures";

it("an activity that fails once is retried: Processed on attempt 1, no failure counted, no alert", async ({
  stack,
}) => {
  expect(ACTIVITY_RETRY.maxAttempts).toBeGreaterThan(1);
  const app = await stack.startApp({ appEntry: orderAppVariant("order-app-flaky-activities") });
  const order = e2eOrder("ACT-RETRY");
  expect((await submitTo(app, order)).status).toBe(202);

  const record = await stack.waitForState(order.orderId, ["Processed"], 60_000);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0 });
  expect(record.history.map((h) => h.event)).not.toContain("expired");
  // Each side effect once, though each activity that recorded an answer and dispatched the next step ran twice.
  await expectOneSetOfEffects(stack, order.orderId);
  // The faults really happened: every Scheduler activity the order ran failed once. The first step was dispatched
  // by the starter with the claim, so the dispatch activity had nothing to do and never ran.
  const failures = app.output().match(new RegExp(`flaky: scheduler\\w+:${order.orderId} fails`, "g")) ?? [];
  expect(new Set(failures)).toEqual(new Set([`flaky: schedulerRecordReply:${order.orderId} fails`]));
  expect(await stack.drain("alerts")).toEqual([]);
}, 90_000);
