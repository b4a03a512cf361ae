/**
 * Failure catalogue: an outage that outlasts OUTAGE_MAX_SECONDS. The payment service answers 503 to every call and
 * never comes back. The orders park while its breaker is open, but only for OUTAGE_MAX_SECONDS from when each was
 * first parked: after that their attempts count again, and each ends in Error with its own alert, its last error
 * naming the wait. Calls per order stay within the retry budget however long it all takes. On the devhost's
 * virtual clock (time-skipping): minutes of outage pass in seconds.
 */
import { CosmosClient } from "@azure/cosmos";
import { EMULATOR_KEY } from "devhost/emulators";
import { expect, vi } from "vitest";
import { breakerRecordId, breakerRecordSchema, computeRetryBudget, type StateRecord } from "../../src/domain";
import { CONTAINERS } from "../../src/store/cosmos";
import { sampleSettings } from "../../tools/repository";
import { E2E_SETTINGS } from "../support/e2e";
import { e2eOrder, forOrder } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";

const OUTAGE_MAX_SECONDS = 120;
const it = e2eTest(
  // Probes (the first after 300 s) come after the maximum, so every order's wait ends by the maximum.
  { BREAKER_OPEN_SECONDS: "300", OUTAGE_MAX_SECONDS: String(OUTAGE_MAX_SECONDS) },
  { timeSkipping: true },
);
const shipped = sampleSettings();

it("orders wait OUTAGE_MAX_SECONDS for a service that never returns, then each ends in Error with one alert", async ({
  e2e,
  alerts,
}) => {
  await e2e.faults.add({ service: "payment", kind: "transient", status: 503 });
  const orders = Array.from({ length: 6 }, () => e2eOrder("OUTLASTED"));
  for (const order of orders) expect((await e2e.submit(order)).status).toBe(202);

  const failed: StateRecord[] = await Promise.all(
    orders.map((o) => e2e.waitForState(o.orderId, ["Error"], 120_000)),
  );
  const parked = failed.filter((r) => r.history.some((h) => h.event === "parked" || h.event === "deferred"));
  expect(parked.length).toBeGreaterThan(0);
  for (const record of parked) {
    // Not before the maximum: the first park (or deferral) to the Error is at least OUTAGE_MAX_SECONDS.
    const firstWait = record.history.find((h) => h.event === "parked" || h.event === "deferred")!.at;
    expect(Date.parse(record.updatedAt) - Date.parse(firstWait)).toBeGreaterThanOrEqual(
      OUTAGE_MAX_SECONDS * 1000,
    );
    expect(record.lastError?.message).toContain(`OUTAGE_MAX_SECONDS=${OUTAGE_MAX_SECONDS}`);
  }

  // How often each order's calls hit the outage, read before it ends (checked against the budget below).
  const { hitsByOrder } = (await e2e.faults.list())[0]!;
  // One Error alert per order, one ServiceUnavailable, no recovery.
  for (const order of orders) await alerts.waitFor(forOrder(order.orderId), 30_000);
  const all = (await alerts.all()) as Array<{ kind: string; orderId: string | null; service?: string }>;
  for (const order of orders) expect(all.filter(forOrder(order.orderId))).toHaveLength(1);
  expect(all.filter((a) => a.kind === "ServiceUnavailable")).toEqual([
    expect.objectContaining({ service: "payment", orderId: null }),
  ]);
  expect(all.filter((a) => a.kind === "ServiceRecovered")).toEqual([]);

  // Payment comes back. Once the open period is over (the breaker's retryAt, on the host's clock), the next order
  // that needs it makes the probe, and the recovery alert sums up the outage. Submitted earlier, that order would
  // itself wait for the probe, and past OUTAGE_MAX_SECONDS it would rightly end in Error too.
  await e2e.faults.clear();
  const retryAt = await paymentBreakerRetryAt(e2e.emulators.cosmosEndpoint);
  await vi.waitFor(
    () => {
      if (e2e.host.clock.now().getTime() < retryAt)
        throw new Error(`the host's clock is not at the breaker's retryAt yet`);
    },
    { timeout: 60_000, interval: 50 },
  );
  const after = e2eOrder("OUTLASTED-AFTER");
  expect((await e2e.submit(after)).status).toBe(202);
  await e2e.waitForState(after.orderId, ["Processed"], 60_000);
  const recovered = (await alerts.waitFor(
    (a) => (a as { kind: string }).kind === "ServiceRecovered",
    30_000,
  )) as {
    reason: string;
  };
  expect(recovered.reason).toContain(`${orders.length} orders waited longer than OUTAGE_MAX_SECONDS`);

  // The retry budget bound each order's calls, parked time notwithstanding.
  const { maxCallsPerStep } = computeRetryBudget({
    agentMaxAttempts: Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS),
    agentRequestMaxDeliveryCount: Number(shipped.AGENT_REQUEST_MAX_DELIVERY_COUNT),
    supervisorMaxFailures: Number(E2E_SETTINGS.SUPERVISOR_MAX_FAILURES),
    retryBudgetPerStep: Number(shipped.RETRY_BUDGET_PER_STEP),
  });
  for (const order of orders) expect(hitsByOrder[order.orderId] ?? 0).toBeLessThanOrEqual(maxCallsPerStep);
}, 150_000);

/** When the payment breaker lets the next call probe (its record in the leases container). */
async function paymentBreakerRetryAt(endpoint: string): Promise<number> {
  const client = new CosmosClient({ endpoint, key: EMULATOR_KEY });
  try {
    const id = breakerRecordId("payment");
    const { resource } = await client
      .database(shipped.COSMOS_DATABASE!)
      .container(CONTAINERS.leases)
      .item(id, id)
      .read();
    const record = breakerRecordSchema.parse(resource);
    expect(record.state, "the payment breaker is open at the end of the outage").toBe("open");
    return Date.parse(record.retryAt!);
  } finally {
    client.dispose();
  }
}
