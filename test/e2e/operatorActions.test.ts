/**
 * Failure catalogue: operator retry and cancel. An operator sends an Error order back to work once the cause is
 * fixed, and cancels an order stuck mid-flight, which undoes its completed and in-doubt steps newest first. Both
 * actions are refused (409) from states they do not apply to, and unknown orders are 404.
 *
 * One remote call per agent attempt (AGENT_MAX_ATTEMPTS=1) keeps a failing service under the agents' circuit
 * breaker threshold (5 consecutive failures per service and process): an open breaker would refuse the retry
 * below for 10 s after the fault is cleared. A long agent attempt (5 s of a 6 s step) keeps the hung booking in
 * flight, so the cancel finds the order Processing.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { type E2E } from "../support/e2e";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { faultOn, processedLedger, undoCall } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest({
  AGENT_MAX_ATTEMPTS: "1",
  AGENT_ATTEMPT_TIMEOUT_SECONDS: "5",
  STEP_TIMEOUT_SECONDS: "6",
});

type Message = { orderId: string; kind?: string; status?: string; reason?: string };
const label = (e: { service: string; operation: string }) => `${e.service}.${e.operation}`;
// From the declaration (src/domain/process.ts): the first step fails, or the last one hangs.
const lastIndex = orderWorkflowV1.steps.length - 1;

/** A person signed in with the operator role: the audit trail names her, by sign-in name and object id. */
const ada = { name: "ada@contoso.com", id: "oid-ada", roles: ["Orders.Operator"] };
const operator = (e2e: E2E, orderId: string, action: "retry" | "cancel") =>
  e2e.operate(orderId, action, { as: ada, reason: `${action} from the e2e test` });

it("retry sends an Error order back to work once the cause is fixed; retrying a Processed order is 409", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("OPRETRY");
  await submitWithFaults(e2e, order, {
    ...faultOn(0),
    kind: "transient",
  });

  const failed = await e2e.waitForState(order.orderId, ["Error"]);
  expect(failed).toMatchObject({ failureCount: 3, attempt: 3, lockedBy: null });
  const alert = (await alerts.waitFor(forOrder(order.orderId))) as Message;
  expect(alert).toMatchObject({ kind: "Error", orderId: order.orderId });
  expect(await e2e.ledger(order.orderId)).toEqual([]);

  await e2e.faults.clear();
  const retried = await operator(e2e, order.orderId, "retry");
  expect(retried.status).toBe(202);
  expect(await retried.json()).toMatchObject({ orderId: order.orderId, processState: "Pending" });

  const done = await e2e.waitForState(order.orderId, ["Processed"]);
  expect(done).toMatchObject({ failureCount: 0, attempt: 4 });
  expect(done.history).toContainEqual(
    expect.objectContaining({
      event: "operatorRetry",
      by: "operator:ada@contoso.com (oid-ada)",
      detail: "retry from the e2e test",
    }),
  );
  const ledger = await e2e.ledger(order.orderId);
  expect(ledger.map(label)).toEqual(processedLedger(order.orderId).map((call) => call.label));
  expect(ledger.every((e) => e.applied && e.requests === 1)).toBe(true);
  await statuses.waitFor((m) => forOrder(order.orderId)(m) && (m as Message).status === "processed");
  const seen = (await statuses.all()).filter(forOrder(order.orderId)) as Message[];
  expect(seen.map((s) => s.status)).toContain("failed");

  const again = await operator(e2e, order.orderId, "retry");
  expect(again.status).toBe(409);
  expect(((await again.json()) as { error: string }).error).toContain("Processed");
  expect((await e2e.state(order.orderId))?.processState).toBe("Processed");
  expect((await alerts.all()).filter(forOrder(order.orderId))).toHaveLength(1);
}, 40_000);

it("cancel of an order stuck mid-flight undoes its steps newest first; cancelling it again is 409", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("OPCANCEL");
  await submitWithFaults(e2e, order, { ...faultOn(lastIndex), kind: "hang" });

  // Stuck: every step before the last done (in the sample, reserve and charge), the last dispatched and hanging.
  await e2e.waitForRecord(
    order.orderId,
    (r) => r.processState === "Processing" && r.steps[lastIndex]?.status === "Dispatched",
    "the order stuck on shipping",
    20_000,
  );
  const cancelled = await operator(e2e, order.orderId, "cancel");
  expect(cancelled.status).toBe(202);
  expect(await cancelled.json()).toMatchObject({ processState: "CompensationPending" });

  const done = await e2e.waitForState(order.orderId, ["Compensated"]);
  expect(done.compensationRequest).toMatchObject({
    requestedBy: "operator:ada@contoso.com (oid-ada)",
    reason: "cancel from the e2e test",
  });
  // The last step is in doubt (no answer), so it is undone too, before every earlier step (in the sample: the
  // booking before the charge and the reservation).
  expect(done.steps.map((s) => [s.status, s.undo?.status ?? null])).toEqual(
    done.steps.map((_, i) => [i < lastIndex ? "Succeeded" : "Dispatched", "Succeeded"]),
  );
  const undone = Array.from({ length: lastIndex + 1 }, (_, i) => undoCall(order.orderId, lastIndex - i));
  const ledger = await e2e.ledger(order.orderId);
  expect(ledger.map(label)).toEqual(
    [...processedLedger(order.orderId).slice(0, lastIndex), ...undone].map((call) => call.label),
  );
  expect(ledger.every((e) => e.requests === 1)).toBe(true);
  // The hung last step never reached its service: its undo is a no-op that closes the order there.
  expect(ledger.map((e) => e.applied)).toEqual(ledger.map((_, i) => i !== lastIndex));
  await statuses.waitFor((m) => forOrder(order.orderId)(m) && (m as Message).status === "compensated");

  const again = await operator(e2e, order.orderId, "cancel");
  expect(again.status).toBe(409);
  expect(((await again.json()) as { error: string }).error).toContain("Compensated");
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
  await e2e.faults.clear();
}, 40_000);

it("retry and cancel of an unknown order are 404", async ({ e2e }) => {
  for (const action of ["retry", "cancel"] as const) {
    const res = await operator(e2e, "NO-SUCH-ORDER", action);
    expect(res.status, action).toBe(404);
    expect(((await res.json()) as { error: string }).error).toContain("NO-SUCH-ORDER");
  }
});
