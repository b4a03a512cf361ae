/**
 * Failure catalogue: the retry budget, with a service that always fails. Every layer that retries multiplies the
 * calls the failing service receives: agent attempts × Service Bus deliveries × Scheduler attempts. The app
 * refuses to start when that product exceeds RETRY_BUDGET_PER_STEP; these tests count, at the service, every call
 * one step really made until the order gave up, and check it against the product the app computes.
 *
 * The stack runs with a budget that is exactly the product (2 agent attempts × 2 deliveries × 2 Scheduler
 * attempts = 8), and with few enough calls that the per-service circuit breaker (5 consecutive failures) never
 * opens, so every layer's retries reach the service and show up in the count.
 */
import fs from "node:fs";
import { expect } from "vitest";
import { loadConfig, type AppConfig } from "../../src/config";
import { AGENT_NAMES, agentRequestQueue, orderWorkflowV1 } from "../../src/domain";
import { computeRetryBudget, type RetryBudget } from "../../src/domain/retryBudget";
import { emulatorConfigFiles } from "../../tools/repository";
import { type E2E, type FaultSpec } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { type QueueLog } from "../support/e2eQueues";
import { faultOn } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const SETTINGS = {
  AGENT_MAX_ATTEMPTS: "2",
  AGENT_REQUEST_MAX_DELIVERY_COUNT: "2",
  SUPERVISOR_MAX_FAILURES: "1",
  RETRY_BUDGET_PER_STEP: "8",
};

const it = e2eTest(SETTINGS).extend<{ $file: { config: AppConfig; budget: RetryBudget } }>({
  // Needs the app running: the devhost puts its settings into this process's environment, read the way it does.
  config: [async ({ e2e: _running }, use) => use(loadConfig(process.env)), { scope: "file" }],
  budget: [async ({ config }, use) => use(computeRetryBudget(config)), { scope: "file" }],
});

it("runs with the settings under test, and the request queues deliver no more often than the budget assumes", ({
  config,
  budget,
}) => {
  expect(config).toMatchObject({ agentMaxAttempts: 2, supervisorMaxFailures: 1, retryBudgetPerStep: 8 });
  expect(budget).toMatchObject({ maxCallsPerStep: 8, budget: 8, withinBudget: true });
  // The deliveries factor is only honest if each request queue's MaxDeliveryCount is at most the setting.
  const emulatorConfig = JSON.parse(fs.readFileSync(emulatorConfigFiles().serviceBus, "utf8")) as {
    UserConfig: {
      Namespaces: Array<{ Queues: Array<{ Name: string; Properties: { MaxDeliveryCount: number } }> }>;
    };
  };
  const queues = emulatorConfig.UserConfig.Namespaces.flatMap((n) => n.Queues).filter((q) =>
    q.Name.endsWith("-requests"),
  );
  expect(queues.map((q) => q.Name).sort()).toEqual(AGENT_NAMES.map(agentRequestQueue).sort());
  for (const q of queues)
    expect(q.Properties.MaxDeliveryCount).toBeLessThanOrEqual(config.agentRequestMaxDeliveryCount);
});

/**
 * Submits an order whose step `index` always fails with a fault of `kind`, waits for Error, and returns every call
 * that reached the service for that step: the calls the fault stopped (its hits) plus those that reached the
 * operation (ledger).
 */
async function callsUntilGivingUp(
  { e2e, alerts, budget }: { e2e: E2E; alerts: QueueLog; budget: RetryBudget },
  prefix: string,
  index: number,
  kind: FaultSpec["kind"],
): Promise<number> {
  const order = e2eOrder(prefix);
  const id = order.orderId;
  const step = orderWorkflowV1.steps[index]!.name;
  const injected = await e2e.faults.add({ ...faultOn(index), orderId: id, kind });
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(id, ["Error"], 35_000);
  // It did retry: the Supervisor gave the step every attempt it allows.
  expect(record).toMatchObject({ attempt: budget.attemptsPerStep, failureCount: budget.attemptsPerStep });
  expect(await alerts.waitFor(forOrder(id))).toMatchObject({ kind: "Error", orderId: id });

  const hits = (await e2e.faults.list()).find((f) => f.id === injected.id)!.hits;
  const reached = (await e2e.ledger(id))
    .filter((e) => e.idempotencyKey === `${id}:${step}:do`)
    .reduce((sum, e) => sum + e.requests, 0);
  return hits + reached;
}

it("a service answering 503 to every call gets at most the budgeted calls for the step", async ({
  e2e,
  alerts,
  config,
  budget,
}) => {
  const calls = await callsUntilGivingUp({ e2e, alerts, budget }, "BUDGET503", 0, "transient");
  console.log(`retry budget, always 503: ${calls} calls for the step; ${budget.explanation}`);
  // More than one attempt's worth of calls, so the retry layers really multiplied...
  expect(calls).toBeGreaterThan(budget.callsPerDelivery);
  // ...and never past what the settings allow, which the app checked against the budget at start-up.
  expect(calls).toBeLessThanOrEqual(budget.maxCallsPerStep);
  expect(budget.maxCallsPerStep).toBeLessThanOrEqual(config.retryBudgetPerStep);
}, 40_000);

it("a service that hangs on every call gets at most the budgeted calls for the step", async ({
  e2e,
  alerts,
  config,
  budget,
}) => {
  const calls = await callsUntilGivingUp(
    { e2e, alerts, budget },
    "BUDGETHANG",
    orderWorkflowV1.steps.length - 1,
    "hang",
  );
  console.log(`retry budget, always hanging: ${calls} calls for the step; ${budget.explanation}`);
  expect(calls).toBeGreaterThan(budget.callsPerDelivery);
  expect(calls).toBeLessThanOrEqual(budget.maxCallsPerStep);
  expect(budget.maxCallsPerStep).toBeLessThanOrEqual(config.retryBudgetPerStep);
}, 40_000);
