/**
 * Fault-injection suite (docs/failure-catalogue.md, "The app's own store and bus"): requests to the Cosmos DB
 * stand-in that get no answer at all, neither a status nor a reset (a half-open connection), with orders in flight.
 * Only the app's own timeout ends such a request (5 s a try, then it is tried again: src/store/storeHttpClient.ts).
 * First every query stalls: the front door's Pending count, the starter's claims, the Supervisor's sweep. Then
 * every write stalls after it reached the store, so the app sees a timeout for a write that landed and its retry
 * meets its own write (409 on a create, 412 on a replace).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKLOG_WAIT_MS } from "../../src/coordination/backlog";
import { STORE_CALLS } from "../../src/resilience/infraResilience";
import { startE2E, type E2E } from "../support/e2e";
import { isOperation, type ArmedRule } from "../support/faultProxy";
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

const BEFORE: OrderKind[] = ["none", "declined", "none", "none"];
const DURING: OrderKind[] = ["none", "declined", "none", "undoRefused", "none", "none", "none", "declined"];

const until = (rule: ArmedRule, ms: number) =>
  pollUntil(
    () => rule.active,
    (active) => !active,
    () => `rule ${rule.name} still active`,
    { timeoutMs: ms + 5_000, intervalMs: 100 },
  );

/** How many Supervisor sweeps finished (logged their summary) after `at`. */
const sweepsAfter = (at: number) =>
  e2e.logs.filter((l) => l.message.startsWith("supervisor sweep:") && l.time.getTime() > at).length;

describe("stalled Cosmos DB requests with orders in flight", () => {
  it("every query stalls for 12 s: POSTs still answer at once; claims and sweeps resume after it", async () => {
    const before = await run.plan("STALLQ", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("STALLQ", DURING);
    const from = Date.now();
    const rule = e2e.proxies!.cosmos.add({
      name: "queries stall",
      path: /\/docs/,
      when: isOperation("query"),
      action: { kind: "stall" },
      durationMs: 12_000,
    });
    // Through the front door one by one, each timed: the Pending count is a query, and it stalls.
    const posted: Array<{ status: number; ms: number }> = [];
    for (const p of during.filter((_, i) => alternate(i) === "api")) {
      const started = Date.now();
      const res = await fetch(`${e2e.host.url}/api/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(p.order),
        signal: AbortSignal.timeout(30_000),
      });
      posted.push({ status: res.status, ms: Date.now() - started });
    }
    // Accepted now, and on the record for the checks: sent again they are the no-op the front door makes of them.
    await run.submit(during, alternate);
    // Each answered 202 long before a stalled try is cut (5 s): the stalled count held none of them (it waits
    // BACKLOG_WAIT_MS, then the last count stands).
    expect(posted.map((p) => p.status)).toEqual(posted.map(() => 202));
    expect(Math.max(...posted.map((p) => p.ms))).toBeLessThan(STORE_CALLS.tryTimeoutMs - BACKLOG_WAIT_MS);
    expect(e2e.proxies!.cosmos.stats().stalled).toBeGreaterThan(0);
    await until(rule, 12_000);
    const ended = Date.now();
    run.faultWindow(from, ended);

    await run.expectEndedAsPlanned("cosmos queries stalled", [...before, ...during], 120_000);
    // The sweep did not stop at the stall: it keeps running on its schedule (every second here).
    await pollUntil(
      () => sweepsAfter(ended),
      (n) => n >= 3,
      (n) => `${n} sweeps finished since the stall ended`,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  }, 180_000);

  it("every write stalls for 8 s after it reached the store: the retries meet their own writes, nothing twice", async () => {
    const before = await run.plan("STALLW", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("STALLW", DURING);
    const from = Date.now();
    const rule = e2e.proxies!.cosmos.add({
      name: "writes stall",
      path: /\/docs/,
      when: isOperation("create", "upsert", "replace", "patch", "delete"),
      // The write applies; only its answer is lost.
      action: { kind: "stall", forward: true },
      durationMs: 8_000,
    });
    run.submitInBackground(during, alternate);
    await until(rule, 8_000);
    run.faultWindow(from, Date.now());
    expect(rule.hits).toBeGreaterThan(0);

    const orders = [...before, ...during];
    await run.expectEndedAsPlanned("cosmos writes stalled", orders, 120_000);
  }, 180_000);
});
