/**
 * Failure catalogue: retries exhausted. The shipping service fails transiently for one order on every call. Each
 * attempt ends early with the agent's transient reply, the Supervisor retries it after a growing back-off, and
 * once the order has failed SUPERVISOR_MAX_FAILURES + 1 times it parks it in Error and alerts an operator. Error
 * is the default policy: nothing is undone, so the reservation and the charge stay applied, once each, for the
 * operator to retry or cancel.
 */
import { expect } from "vitest";
import { E2E_SETTINGS, e2eOrder, forOrder } from "../support/e2e";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

it("a service that keeps failing ends the order in Error after SUPERVISOR_MAX_FAILURES + 1 attempts, with an alert", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("EXHAUST");
  const id = order.orderId;
  const attempts = Number(E2E_SETTINGS.SUPERVISOR_MAX_FAILURES) + 1;
  const down = await e2e.faults.add({
    service: "shipping",
    operation: "book",
    orderId: id,
    kind: "transient",
  });
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(id, ["Error"], 35_000);
  expect(record).toMatchObject({
    attempt: attempts,
    failureCount: attempts,
    lockedBy: null,
    completeBy: null,
    retryAt: null,
    lastError: { code: "RetriesExhausted" },
  });
  expect(record.lastError!.message).toContain(`${attempts} attempts failed or timed out`);
  // Not compensated: the first two steps stay done, the booking stays in doubt for the operator.
  expect(record.steps.map((s) => [s.name, s.status, s.undo])).toEqual([
    ["reserveInventory", "Succeeded", null],
    ["chargePayment", "Succeeded", null],
    ["bookShipping", "Dispatched", null],
  ]);
  const decisions = record.history.filter((h) => h.by === "supervisor");
  expect(decisions.map((h) => [h.attempt, h.event, h.to])).toEqual([
    [1, "expired", "Pending"],
    [2, "expired", "Pending"],
    [3, "retriesExhausted", "Error"],
  ]);
  // Only the failing step was retried: each later attempt dispatched the booking, nothing before it.
  expect(
    record.history.filter((h) => h.event === "stepDispatched").map((h) => [h.attempt, h.detail]),
  ).toEqual([
    [1, "reserveInventory"],
    [1, "chargePayment"],
    [1, "bookShipping"],
    [2, "bookShipping"],
    [3, "bookShipping"],
  ]);

  const alert = await alerts.waitFor(forOrder(id));
  expect(alert).toMatchObject({ kind: "Error", orderId: id, processState: "Error" });
  expect((alert as { reason: string }).reason).toContain(`${attempts} attempts failed or timed out`);
  expect((await alerts.all()).filter(forOrder(id))).toHaveLength(1);

  const failed = await statuses.waitFor(
    (m) => forOrder(id)(m) && (m as { status: string }).status === "failed",
  );
  expect(failed).toMatchObject({ processState: "Error" });

  // The earlier effects were applied once each and never undone; the booking never reached the service.
  const ledger = await e2e.ledger(id);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied, e.requests])).toEqual([
    [`${id}:reserveInventory:do`, true, 1],
    [`${id}:chargePayment:do`, true, 1],
  ]);
  // The agent called the service on more than one attempt (then the circuit breaker may have spared it).
  expect((await e2e.faults.list()).find((f) => f.id === down.id)!.hits).toBeGreaterThan(
    Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS),
  );
}, 45_000);
