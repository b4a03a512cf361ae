/**
 * Failure catalogue: a downstream outage. The payment service answers 503 to every call for longer than one
 * order's whole retry window (SUPERVISOR_MAX_FAILURES + 1 attempts with their back-offs), while orders keep
 * arriving. The shared breaker opens after a few failed calls; from then on the agents make no call, and the
 * orders are parked (or, not yet claimed, deferred) until its probe time without a failure counted. One probe per
 * open period tries the service; when it answers, every order goes on to Processed. Operators get one
 * ServiceUnavailable and one ServiceRecovered alert, not one alert per order. Orders that fail on their own during
 * the outage still do so: one the payment service declines is Compensated, one whose call to another service (the
 * last step not on payment: in the sample, the booking) always fails ends in Error with its own alert.
 */
import { expect } from "vitest";
import { AGENT_NAMES, computeRetryBudget } from "../../src/domain";
import { E2E_SETTINGS, type E2E } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { faultOn, lastStepNotOn } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { sampleSettings } from "../../tools/repository";

const SETTINGS = { BREAKER_OPEN_SECONDS: "4" };
const it = e2eTest(SETTINGS);
const shipped = sampleSettings();

/** Seconds of outage: well past one order's retry window (3 attempts, 3 s deadlines, 1 + 2 s back-off). */
const OUTAGE_SECONDS = 25;
const ORDERS = 16;

/** Each service's breaker state, from GET /api/stats. */
async function breakers(e2e: E2E): Promise<Record<string, string>> {
  const stats = (await (await e2e.api("/api/stats")).json()) as {
    services: Array<{ service: string; state: string }>;
  };
  return Object.fromEntries(stats.services.map((s) => [s.service, s.state]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("an outage longer than the retry window: every order Processed after recovery, one alert each way", async ({
  e2e,
  alerts,
}) => {
  const outage = await e2e.faults.add({ service: "payment", kind: "transient", status: 503 });
  const started = Date.now();
  const orders = Array.from({ length: ORDERS }, () => e2eOrder("OUTAGE"));
  const declined = e2eOrder("OUTAGE-DECLINED", { items: [{ sku: "SKU-1", quantity: 2, unitPrice: 9000 }] });
  const failing = e2eOrder("OUTAGE-FAILING");
  await e2e.faults.add({
    ...faultOn(lastStepNotOn("payment")),
    orderId: failing.orderId,
    kind: "transient",
  });
  // Orders arrive all through the outage, the two that fail on their own among them.
  for (const [i, order] of [...orders, declined, failing].entries()) {
    expect((await e2e.submit(order)).status).toBe(202);
    if (i % 2 === 1) await sleep(((OUTAGE_SECONDS - 8) * 1000) / ORDERS);
  }
  const opened = await alerts.waitFor((m) => (m as { kind: string }).kind === "ServiceUnavailable", 20_000);
  expect(opened).toMatchObject({ service: "payment", orderId: null });
  // What an operator's dashboard shows meanwhile: payment's breaker not closed, the others closed.
  expect(await breakers(e2e)).toEqual(
    Object.fromEntries(
      AGENT_NAMES.map((s) => [s, s === "payment" ? expect.stringMatching(/^(open|halfOpen)$/) : "closed"]),
    ),
  );
  await sleep(Math.max(0, started + OUTAGE_SECONDS * 1000 - Date.now()));
  const { hits, hitsByOrder } = (await e2e.faults.list()).find((f) => f.id === outage.id)!;
  await e2e.faults.remove(outage.id);

  const finished = await Promise.all(orders.map((o) => e2e.waitForState(o.orderId, ["Processed"], 60_000)));
  // Nobody's budget was spent on the outage beyond the few that ran into it before the breaker opened.
  const maxFailures = Number(E2E_SETTINGS.SUPERVISOR_MAX_FAILURES);
  for (const record of finished) expect(record.failureCount).toBeLessThanOrEqual(maxFailures);
  expect(
    finished.filter((r) => r.history.some((h) => h.event === "parked" || h.event === "deferred")).length,
  ).toBeGreaterThan(ORDERS / 2);
  expect(finished.every((r) => r.parkedSince === null)).toBe(true);

  // Each order's calls to the failing service (refused during the outage, then the one that worked) stayed within
  // the retry budget, and the breaker spared the service most of them.
  const { maxCallsPerStep } = computeRetryBudget({
    agentMaxAttempts: Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS),
    agentRequestMaxDeliveryCount: Number(shipped.AGENT_REQUEST_MAX_DELIVERY_COUNT),
    supervisorMaxFailures: maxFailures,
    retryBudgetPerStep: Number(shipped.RETRY_BUDGET_PER_STEP),
  });
  const ledger = await e2e.ledger();
  for (const order of orders) {
    const charges = ledger.filter((e) => e.idempotencyKey === `${order.orderId}:chargePayment:do`);
    expect(charges).toEqual([expect.objectContaining({ applied: true })]);
    expect((hitsByOrder[order.orderId] ?? 0) + charges[0]!.requests).toBeLessThanOrEqual(maxCallsPerStep);
  }
  // Without the breaker each order would have made AGENT_MAX_ATTEMPTS calls per attempt, every attempt.
  expect(hits).toBeLessThan(ORDERS * Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS));

  expect((await e2e.waitForState(declined.orderId, ["Compensated"], 30_000)).lastError?.code).toBe(
    "PaymentDeclined",
  );
  const failed = await e2e.waitForState(failing.orderId, ["Error"], 45_000);
  expect(failed.lastError?.code).toBe("RetriesExhausted");
  await alerts.waitFor((m) => (m as { kind: string }).kind === "ServiceRecovered", 10_000);
  expect((await breakers(e2e)).payment).toBe("closed");
  await alerts.waitFor(forOrder(failing.orderId), 10_000);

  const kinds = (
    (await alerts.all()) as Array<{ kind: string; orderId: string | null; service?: string }>
  ).map((a) => [a.kind, a.service ?? a.orderId]);
  expect(kinds.sort()).toEqual(
    [
      ["Error", failing.orderId],
      ["ServiceRecovered", "payment"],
      ["ServiceUnavailable", "payment"],
    ].sort(),
  );
}, 150_000);
