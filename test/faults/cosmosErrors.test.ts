/**
 * Fault-injection suite (docs/failure-catalogue.md, "The app's own store and bus"): the Cosmos DB stand-in answers
 * the app's writes and queries with the errors the service sends under load or while a partition moves, for a few
 * seconds, with orders in flight. 429 for longer than the SDK's own throttle retries last (they then reach the app);
 * then 503, 408 and 449 one after the other, on reads too. Orders go in before and during the burst, half through
 * the front door and half straight onto `orders`; some are declined by payment (compensation runs) and one has its
 * compensation refused (CompensationFailed, one alert). Everything is checked from outside the app (faultSuite.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2E, type E2E } from "../support/e2e";
import {
  isOperation,
  requestTimeout,
  retryWith,
  serviceUnavailable,
  throttled,
  type ArmedRule,
  type CosmosErrorSpec,
  type CosmosOperation,
} from "../support/faultProxy";
import { alternate, FaultRun, type OrderKind } from "../support/faultSuite";
import { pollUntil } from "../support/wait";

let e2e: E2E;
let run: FaultRun;

beforeAll(async () => {
  e2e = await startE2E({}, { faultProxies: true });
  run = new FaultRun({ emulators: e2e.emulators, appUrl: () => e2e.host.url });
});
afterAll(async () => {
  await run?.close();
  await e2e?.stop();
});

const WRITES_AND_QUERIES: CosmosOperation[] = ["create", "upsert", "replace", "patch", "delete", "query"];
const BEFORE: OrderKind[] = ["none", "declined", "none", "none"];
const DURING: OrderKind[] = ["none", "declined", "none", "undoRefused", "none", "none", "none", "declined"];

/** Arms `error` on `operations` for `ms` and resolves once the rule has retired. */
async function burst(
  name: string,
  error: CosmosErrorSpec,
  operations: CosmosOperation[],
  ms: number,
): Promise<ArmedRule> {
  const rule = e2e.proxies!.cosmos.add({
    name,
    path: /\/docs/,
    when: isOperation(...operations),
    action: { kind: "status", error },
    durationMs: ms,
  });
  await pollUntil(
    () => rule.active,
    (active) => !active,
    () => `rule ${name} still active`,
    { timeoutMs: ms + 5_000, intervalMs: 100 },
  );
  return rule;
}

/** Log lines where a store error reached the app's own handling: a message put back, a 503 at the front door. */
const storeFaultLines = (status: number) =>
  e2e.logs.filter((l) => l.message.includes(`store ${status}`)).map((l) => l.message);

describe("Cosmos DB error bursts with orders in flight", () => {
  it("429 past the SDK's throttle retries, on writes and queries for 8 s: every accepted order ends, once", async () => {
    const before = await run.plan("C429", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("C429", DURING);
    const from = Date.now();
    const rule = e2e.proxies!.cosmos.add({
      name: "throttled",
      path: /\/docs/,
      when: isOperation(...WRITES_AND_QUERIES),
      // The SDK waits what the header asks (20 ms) 9 times, then hands the 429 over: 8 s outlasts that many times.
      action: { kind: "status", error: throttled(20) },
      durationMs: 8_000,
    });
    run.submitInBackground(during, alternate);
    await pollUntil(
      () => rule.active,
      (active) => !active,
      () => "throttling still on",
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    run.faultWindow(from, Date.now());
    // The throttling outlasted the SDK's retries: the 429 reached the app, which put work back or answered 503.
    expect(rule.hits).toBeGreaterThan(10);
    expect(storeFaultLines(429).length).toBeGreaterThan(0);

    const orders = [...before, ...during];
    await run.expectEndedAsPlanned("cosmos 429", orders, 120_000);
  }, 180_000);

  it("503, then 408, then 449 on writes, queries and reads, 3 s each: every accepted order ends, once", async () => {
    const before = await run.plan("C5XX", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("C5XX", DURING);
    const from = Date.now();
    const operations: CosmosOperation[] = [...WRITES_AND_QUERIES, "read"];
    // The orders go in with the first burst and keep meeting the next ones.
    run.submitInBackground(during, alternate);
    const rules = [
      await burst("503", serviceUnavailable(), operations, 3_000),
      await burst("408", requestTimeout(), operations, 3_000),
      await burst("449", retryWith(), operations, 3_000),
    ];
    run.faultWindow(from, Date.now());
    for (const rule of rules) expect(rule.hits, `${rule.name} hits`).toBeGreaterThan(0);

    const orders = [...before, ...during];
    await run.expectEndedAsPlanned("cosmos 503/408/449", orders, 120_000);
  }, 180_000);
});
