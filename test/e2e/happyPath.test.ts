/** Failure catalogue: the happy path. Every step succeeds once, in order; the submitter hears every milestone. */
import { expect } from "vitest";
import { e2eOrder } from "../support/e2eOrders";
import { processedLedger, processedStatuses } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

it("processes an order to Processed with each side effect applied once, in order", async ({ e2e }) => {
  const order = e2eOrder("HAPPY");
  const res = await e2e.submit(order);
  expect(res.status).toBe(202);
  expect(await res.json()).toMatchObject({
    orderId: order.orderId,
    statusUrl: expect.stringContaining(`/api/orders/${order.orderId}`),
  });

  const record = await e2e.waitForState(order.orderId, ["Processed"]);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0, lockedBy: null, completeBy: null });
  const expected = processedLedger(order.orderId);
  expect(record.steps.map((s) => s.status)).toEqual(expected.map(() => "Succeeded"));

  // Each step of the declaration (src/domain/process.ts), in order.
  const ledger = await e2e.ledger(order.orderId);
  expect(
    ledger.map((e) => ({ label: `${e.service}.${e.operation}`, idempotencyKey: e.idempotencyKey })),
  ).toEqual(expected);
  expect(ledger.every((e) => e.applied && e.requests === 1)).toBe(true);

  const statuses = (await e2e.drain("status-demo")) as Array<{ orderId: string; status: string }>;
  expect(statuses.filter((s) => s.orderId === order.orderId).map((s) => s.status)).toEqual(
    processedStatuses(),
  );
  expect(await e2e.drain("alerts")).toEqual([]);
});
