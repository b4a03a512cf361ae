/**
 * Failure catalogue: a service that answers something that is not its answer. Something in front of the payment
 * service (a proxy, a gateway, a misrouted URL) answers every charge of one order with an HTML page and a 200.
 * That is not a charge: the agent retries it as transient, the Supervisor retries the step, and once the order has
 * failed SUPERVISOR_MAX_FAILURES + 1 times it ends in Error. An operator hears of it once, as InvalidAnswer,
 * naming the service and the operation, and then as Error; no charge is recorded, none was made.
 */
import { expect } from "vitest";
import { idempotencyKeyFor } from "../../src/domain";
import { E2E_SETTINGS } from "../support/e2e";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { faultOn, processedLedger, stepIndex } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

type Alert = { kind: string; service?: string; orderId: string | null; reason: string };

it("an HTML 200 to a charge is no charge: retried, then Error, one InvalidAnswer alert, nothing recorded as charged", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("HTML-CHARGE");
  const id = order.orderId;
  const charge = stepIndex("chargePayment");
  const attempts = Number(E2E_SETTINGS.SUPERVISOR_MAX_FAILURES) + 1;
  const [page] = await submitWithFaults(e2e, order, {
    ...faultOn(charge),
    kind: "answer",
    status: 200,
    contentType: "text/html; charset=utf-8",
    body: "<html><body><h1>Payment received</h1><p>Thank you!</p></body></html>",
  });

  const record = await e2e.waitForState(id, ["Error"], 35_000);
  expect(record).toMatchObject({
    attempt: attempts,
    failureCount: attempts,
    lockedBy: null,
    lastError: { code: "RetriesExhausted" },
  });
  // The charge never succeeded in the record: no result, no charge id, the step in doubt for the operator.
  const step = record.steps[charge]!;
  expect(step).toMatchObject({ status: "Dispatched", result: null, lastError: { code: "InvalidAnswer" } });
  expect(step.lastError!.message).toMatch(/HTTP 200 with content-type "text\/html".*not a JSON object/);
  expect(record.steps.slice(charge + 1).every((s) => s.status === "Pending")).toBe(true);
  // Every attempt dispatched the charge and failed it transiently; none recorded it as done.
  expect(record.history.some((h) => h.event === "stepSucceeded" && h.detail === step.name)).toBe(false);
  // The Supervisor's decisions (its sweep may also have marked the Error alert sent by now: not a decision).
  const decisions = record.history.filter((h) => h.by === "supervisor" && h.event !== "alertSent");
  expect(decisions.map((h) => h.event)).toEqual([
    ...Array.from({ length: attempts - 1 }, () => "expired"),
    "retriesExhausted",
  ]);

  // One InvalidAnswer alert for the step, however many calls met the page, then the Supervisor's Error.
  await alerts.waitFor((m) => forOrder(id)(m) && (m as Alert).kind === "Error");
  const mine = (await alerts.all()).filter(forOrder(id)) as Alert[];
  expect(mine.map((a) => a.kind).sort()).toEqual(["Error", "InvalidAnswer"]);
  const invalid = mine.find((a) => a.kind === "InvalidAnswer")!;
  expect(invalid).toMatchObject({ service: "payment" });
  expect(invalid.reason).toMatch(
    /^payment charge \(step chargePayment do\) answered what is not its answer: /,
  );
  expect(invalid.reason).toContain("/payment/charge");

  // The ledger: the reservation applied once, no charge at all (the page answered in front of the service).
  const ledger = await e2e.ledger(id);
  expect(ledger.map((e) => e.idempotencyKey)).toEqual(
    processedLedger(id)
      .slice(0, charge)
      .map((call) => call.idempotencyKey),
  );
  expect(ledger.some((e) => e.idempotencyKey === idempotencyKeyFor(id, step.name, "do"))).toBe(false);
  // Each attempt's agent called through its retries: the page was met more than one attempt's worth of calls.
  expect((await e2e.faults.list()).find((f) => f.id === page!.id)!.hits).toBeGreaterThan(
    Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS),
  );
}, 45_000);
