/**
 * Failure catalogue: transient errors within the agent's budget. Each remote service answers 5xx twice before it
 * works, fewer times than AGENT_MAX_ATTEMPTS (3): the agents' own retries absorb the errors inside the step
 * deadline, so neither the Scheduler nor the Supervisor ever sees a failure.
 */
import { expect } from "vitest";
import { E2E_SETTINGS, e2eOrder, forOrder } from "../support/e2e";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

it("two 5xx per service are retried away by the agents: Processed on attempt 1, failureCount 0", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("BLIP");
  const id = order.orderId;
  const failuresPerCall = Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS) - 1;
  expect(failuresPerCall).toBe(2);
  const faults = [
    await e2e.faults.add({
      service: "inventory",
      operation: "reserve",
      orderId: id,
      kind: "transient",
      count: failuresPerCall,
    }),
    await e2e.faults.add({
      service: "payment",
      operation: "charge",
      orderId: id,
      kind: "transient",
      status: 500,
      count: failuresPerCall,
    }),
    await e2e.faults.add({
      service: "shipping",
      operation: "book",
      orderId: id,
      kind: "transient",
      status: 502,
      count: failuresPerCall,
    }),
  ];
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(id, ["Processed"]);
  expect(record).toMatchObject({
    attempt: 1,
    failureCount: 0,
    lockedBy: null,
    completeBy: null,
    lastError: null,
  });
  expect(record.steps.map((s) => [s.status, s.lastError])).toEqual([
    ["Succeeded", null],
    ["Succeeded", null],
    ["Succeeded", null],
  ]);
  expect(record.history.map((h) => h.event)).not.toContain("stepFailedTransient");

  // Every fault fired in full: each agent really did fail twice before it succeeded.
  const after = await e2e.faults.list();
  for (const fault of faults)
    expect(after.find((f) => f.id === fault.id)).toMatchObject({ hits: 2, remaining: 0 });
  // The 5xx answered in front of the services, so each operation ran once, on the third call.
  const ledger = await e2e.ledger(id);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied, e.requests])).toEqual([
    [`${id}:reserveInventory:do`, true, 1],
    [`${id}:chargePayment:do`, true, 1],
    [`${id}:bookShipping:do`, true, 1],
  ]);

  await statuses.waitFor((m) => forOrder(id)(m) && (m as { status: string }).status === "processed");
  const seen = (await statuses.all()).filter(forOrder(id)) as Array<{ status: string }>;
  expect(seen.map((s) => s.status)).toEqual([
    "received",
    "processing",
    "stepSucceeded",
    "stepSucceeded",
    "stepSucceeded",
    "processed",
  ]);
  expect((await alerts.all()).filter(forOrder(id))).toEqual([]);
}, 30_000);
