/**
 * Failure catalogue: retries exhausted. The shipping service fails transiently for one order on every call. Each
 * attempt ends early with the agent's transient reply, the Supervisor retries it after a growing back-off, and
 * once the order has failed SUPERVISOR_MAX_FAILURES + 1 times it parks it in Error and alerts an operator. Error
 * is the default policy: nothing is undone, so the reservation and the charge stay applied, once each, for the
 * operator to retry or cancel.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { E2E_SETTINGS } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { faultOn, processedLedger } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

// From the declaration: the last step (in the sample, the booking) is the one that keeps failing.
const names = orderWorkflowV1.steps.map((s) => s.name);
const lastIndex = names.length - 1;
const last = orderWorkflowV1.steps[lastIndex]!;

it("a service that keeps failing ends the order in Error after SUPERVISOR_MAX_FAILURES + 1 attempts, with an alert", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("EXHAUST");
  const id = order.orderId;
  const attempts = Number(E2E_SETTINGS.SUPERVISOR_MAX_FAILURES) + 1;
  const down = await e2e.faults.add({
    ...faultOn(lastIndex),
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
  // Not compensated: the steps before the last stay done, the last stays in doubt for the operator.
  expect(record.steps.map((s) => [s.name, s.status, s.undo])).toEqual(
    names.map((n, i) => [n, i < lastIndex ? "Succeeded" : "Dispatched", null]),
  );
  const decisions = record.history.filter((h) => h.by === "supervisor");
  expect(decisions.map((h) => [h.attempt, h.event, h.to])).toEqual([
    [1, "expired", "Pending"],
    [2, "expired", "Pending"],
    [3, "retriesExhausted", "Error"],
  ]);
  // Only the failing step was retried: each later attempt dispatched the last step, nothing before it.
  expect(
    record.history.filter((h) => h.event === "stepDispatched").map((h) => [h.attempt, h.detail]),
  ).toEqual([
    ...names.map((n) => [1, n]),
    ...Array.from({ length: attempts - 1 }, (_, i) => [i + 2, last.name]),
  ]);

  const alert = await alerts.waitFor(forOrder(id));
  expect(alert).toMatchObject({ kind: "Error", orderId: id, processState: "Error" });
  expect((alert as { reason: string }).reason).toContain(`${attempts} attempts failed or timed out`);
  expect((await alerts.all()).filter(forOrder(id))).toHaveLength(1);

  const failed = await statuses.waitFor(
    (m) => forOrder(id)(m) && (m as { status: string }).status === "failed",
  );
  expect(failed).toMatchObject({ processState: "Error" });

  // The earlier effects were applied once each and never undone; the last step never reached its service.
  const ledger = await e2e.ledger(id);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied, e.requests])).toEqual(
    processedLedger(id)
      .slice(0, lastIndex)
      .map((call) => [call.idempotencyKey, true, 1]),
  );
  // The agent called the service on more than one attempt (then the circuit breaker may have spared it).
  expect((await e2e.faults.list()).find((f) => f.id === down.id)!.hits).toBeGreaterThan(
    Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS),
  );
}, 45_000);
