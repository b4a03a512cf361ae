/**
 * The shipped Azure settings (infra/main.bicep: 60 s steps, a Supervisor sweep every 15 s, back-offs from 10 s
 * doubling, 3 retries) on the devhost's azure-storage latency profile (every Service Bus delivery and durable queue
 * hop delayed, cold starts after idle) and on its virtual clock, which jumps to the next due timer whenever the
 * host is idle: the scenarios that wait for production-length deadlines and back-offs run in seconds of wall time,
 * while the platform's latencies count against the same deadlines as in Azure. Each test reports the virtual time
 * it covered against the wall time it took.
 */
import { readFileSync } from "node:fs";
import { expect, vi } from "vitest";
import { AGENT_NAMES, agentFunctionName, agentRequestQueue, type StateRecord } from "../../src/domain";
import { type E2E } from "../support/e2e";
import { e2eOrder, expectOneSetOfEffects, forOrder } from "../support/e2eOrders";
import { azureTuningDefaults } from "../support/azureDefaults";
import { compensatedLedger, faultOn, lastStepNotOn, stepIndex } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const AZURE = azureTuningDefaults();
const it = e2eTest(
  { ...AZURE, DEVHOST_LATENCY_PROFILE: "azure-storage", DEVHOST_LATENCY_SEED: "20261201" },
  { timeSkipping: true },
);

type Alert = { kind: string; orderId: string; reason: string };

/** MaxDeliveryCount of a service's agent request queue, which main.bicep also gives the app. */
function requestMaxDeliveryCount(service: string): number {
  const config = JSON.parse(readFileSync("infra/servicebus-emulator.config.json", "utf8")) as {
    UserConfig: {
      Namespaces: Array<{ Queues: Array<{ Name: string; Properties: { MaxDeliveryCount: number } }> }>;
    };
  };
  return config.UserConfig.Namespaces[0]!.Queues.find((q) => q.Name === agentRequestQueue(service))!
    .Properties.MaxDeliveryCount;
}

/** Virtual and wall time from now on, for the report line. */
function stopwatch(e2e: E2E): () => string {
  const virtualStart = e2e.host.clock.now().getTime();
  const wallStart = Date.now();
  return () =>
    `${((e2e.host.clock.now().getTime() - virtualStart) / 1000).toFixed(0)} s of virtual time in ` +
    `${((Date.now() - wallStart) / 1000).toFixed(1)} s of wall time`;
}

/** The longest a step took from dispatch to its reply recorded, in (virtual) seconds. */
function slowestStepSeconds(records: StateRecord[]): number {
  return Math.max(
    ...records.flatMap((r) =>
      r.steps.map((st) => (Date.parse(st.completedAt!) - Date.parse(st.dispatchedAt!)) / 1000),
    ),
  );
}

it("idle, then a burst: every order Processed on its first attempt, cold starts and all", async ({
  e2e,
  alerts,
}) => {
  const elapsed = stopwatch(e2e);
  const submitAll = async (prefix: string, count: number) => {
    const orders = Array.from({ length: count }, (_, i) => e2eOrder(`${prefix}-${i}`));
    for (const order of orders) expect((await e2e.submit(order)).status).toBe(202);
    return Promise.all(orders.map((o) => e2e.waitForState(o.orderId, ["Processed"], 120_000)));
  };
  const first = await submitAll("PROD-WARMUP", 3);
  // Idle past the profile's cold-start threshold (10 minutes): every function group goes cold again.
  const idleUntil = e2e.host.clock.now().getTime() + 11 * 60_000;
  await vi.waitFor(
    () => {
      if (e2e.host.clock.now().getTime() < idleUntil)
        throw new Error("the host's clock is not 11 minutes on yet");
    },
    { timeout: 90_000, interval: 50 },
  );
  const logsBeforeBurst = e2e.logs.length;
  const burst = await submitAll("PROD-BURST", 10);
  // The burst paid the cold starts of the groups on its way (the profile logs each delay it applies).
  const coldStarts = e2e.logs
    .slice(logsBeforeBurst)
    .filter((r) => r.message.startsWith("Latency: coldStart"))
    .map((r) => /group ([^,]+),/.exec(r.message)?.[1]);
  // Flex Consumption's group names: http, durable, and each other trigger function on its own. The front door
  // records the submission itself, so submitOrder (the orders queue's) is not on the way.
  expect(new Set(coldStarts)).toEqual(
    new Set([
      "http",
      "durable",
      ...[...AGENT_NAMES.map(agentFunctionName), "agentReplies"].map((name) => `function:${name}`),
    ]),
  );
  const stepTimeout = Number(AZURE.STEP_TIMEOUT_SECONDS);
  for (const record of [...first, ...burst]) {
    expect(record, record.orderId).toMatchObject({ attempt: 1, failureCount: 0 });
    expect(
      record.history.map((h) => h.event),
      record.orderId,
    ).not.toContain("expired");
  }
  const slowest = slowestStepSeconds([...first, ...burst]);
  expect(slowest).toBeLessThan(stepTimeout);
  expect(await alerts.all()).toEqual([]);
  console.log(
    `idle then burst at production timings: ${elapsed()}; slowest step ${slowest.toFixed(1)} s of STEP_TIMEOUT_SECONDS=${stepTimeout}`,
  );
}, 180_000);

it("retries exhausted: a service that always fails ends the order in Error after the production back-offs, with one alert", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("PROD-EXHAUSTED");
  // On the last step not on payment (in the sample, the booking): each service's circuit breaker is shared by the
  // orders of a process, so the outage of this test must not open the one the next tests' faults are on (payment).
  const failing = faultOn(lastStepNotOn("payment"));
  const down = await e2e.faults.add({ ...failing, orderId: order.orderId, kind: "transient" });
  const elapsed = stopwatch(e2e);
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(order.orderId, ["Error"], 120_000);
  const maxFailures = Number(AZURE.SUPERVISOR_MAX_FAILURES);
  expect(record).toMatchObject({ attempt: maxFailures + 1, failureCount: maxFailures + 1 });
  // The Supervisor waited its back-offs between attempts: 10 s, 20 s, 40 s with the shipped settings.
  const claims = record.history.filter((h) => h.event === "claimed").map((h) => Date.parse(h.at));
  const backoff = Number(AZURE.SUPERVISOR_BACKOFF_SECONDS) * 1000;
  for (let i = 1; i < claims.length; i++) {
    expect(claims[i]! - claims[i - 1]!, `gap before attempt ${i + 1}`).toBeGreaterThanOrEqual(
      backoff * 2 ** (i - 1),
    );
  }
  const alert = (await alerts.waitFor(forOrder(order.orderId))) as Alert;
  expect(alert.kind).toBe("Error");
  expect((await alerts.all()).filter(forOrder(order.orderId))).toHaveLength(1);
  // The retry budget held: agent attempts × deliveries × Scheduler attempts at the most reached the service.
  const hits = (await e2e.faults.list()).find((f) => f.id === down.id)!.hits;
  const budget =
    Number(AZURE.AGENT_MAX_ATTEMPTS) * requestMaxDeliveryCount(failing.service) * (maxFailures + 1);
  expect(hits).toBeGreaterThan(0);
  expect(hits).toBeLessThanOrEqual(budget);
  console.log(`retries exhausted at production timings: ${elapsed()}`);
}, 150_000);

it("agent silent: the payment agent takes nothing for a while; the 60 s deadline passes, the Supervisor's retry finishes the order", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("PROD-SILENT");
  // As if the payment agent's function were disabled: its requests wait in the queue, and no invocation runs.
  await e2e.host.pauseTrigger("paymentAgent");
  const elapsed = stopwatch(e2e);
  expect((await e2e.submit(order)).status).toBe(202);
  const expired = await e2e.waitForRecord(
    order.orderId,
    (r) => r.history.some((h) => h.event === "expired" && h.attempt === 1),
    "attempt 1 expired",
    60_000,
  );
  e2e.host.resumeTrigger("paymentAgent");

  const record = await e2e.waitForState(order.orderId, ["Processed"], 120_000);
  expect(record).toMatchObject({ attempt: 2, failureCount: 1 });
  // Attempt 1 ended by its durable timer at the charge's completeBy, a full STEP_TIMEOUT_SECONDS after dispatch.
  const charge1 = expired.history.find(
    (h) => h.event === "stepDispatched" && h.attempt === 1 && h.detail?.startsWith("chargePayment"),
  );
  const expiry = expired.history.find((h) => h.event === "expired" && h.attempt === 1)!;
  expect(Date.parse(expiry.at) - Date.parse(charge1!.at)).toBeGreaterThanOrEqual(
    Number(AZURE.STEP_TIMEOUT_SECONDS) * 1000,
  );
  // The charge reached the service once: attempt 1's request, delivered late, was dropped by the agent.
  await expectOneSetOfEffects(e2e, order.orderId);
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
  console.log(`a silent agent retried at production timings: ${elapsed()}`);
}, 150_000);

it("a service that hangs through a whole delivery: the agent gives up, the Supervisor's retry after the back-off finishes the order", async ({
  e2e,
  alerts,
}) => {
  const order = e2eOrder("PROD-HANG");
  // Every call of the first delivery hangs until the agent's attempt timeout; then the service answers again.
  const agentAttempts = Number(AZURE.AGENT_MAX_ATTEMPTS);
  await e2e.faults.add({
    service: "payment",
    operation: "charge",
    orderId: order.orderId,
    kind: "hang",
    count: agentAttempts,
  });
  const elapsed = stopwatch(e2e);
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(order.orderId, ["Processed"], 120_000);
  expect(record).toMatchObject({ attempt: 2, failureCount: 1 });
  // Attempt 2 was claimed no sooner than the first back-off after attempt 1 failed.
  const failed = record.history.find((h) => h.attempt === 1 && h.event !== "claimed" && h.to === "Pending");
  const retried = record.history.find((h) => h.event === "claimed" && h.attempt === 2);
  expect(Date.parse(retried!.at) - Date.parse(failed!.at)).toBeGreaterThanOrEqual(
    Number(AZURE.SUPERVISOR_BACKOFF_SECONDS) * 1000,
  );
  await expectOneSetOfEffects(e2e, order.orderId);
  expect((await alerts.all()).filter(forOrder(order.orderId))).toEqual([]);
  console.log(`a hung delivery retried at production timings: ${elapsed()}`);
}, 150_000);

it("a permanent refusal is compensated at production timings: Compensated, the reservation released", async ({
  e2e,
}) => {
  const order = e2eOrder("PROD-DECLINED");
  await e2e.faults.add({
    service: "payment",
    operation: "charge",
    orderId: order.orderId,
    kind: "permanent",
  });
  const elapsed = stopwatch(e2e);
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(order.orderId, ["Compensated"], 120_000);
  expect(record).toMatchObject({ attempt: 1, failureCount: 0 });
  // The steps before the charge done and undone, newest first; the refused charge has no entry (a fault answered).
  const ledger = await e2e.ledger(order.orderId);
  expect(ledger.map((e) => `${e.service}.${e.operation}`)).toEqual(
    compensatedLedger(order.orderId, stepIndex("chargePayment"), { refusedByService: false }).map(
      (call) => call.label,
    ),
  );
  console.log(`compensation at production timings: ${elapsed()}`);
}, 150_000);
