/**
 * Fault-injection suite (docs/failure-catalogue.md, "The app's own store and bus"): the app's process is killed
 * (SIGKILL) in the middle of a Cosmos DB outage (503 on every document request for 12 s) with orders in flight,
 * and started again on the same data directory while the outage lasts. The app runs on the devhost CLI in a child
 * process behind the fault proxies; the emulators, the simulator and the suite's own clients stay in this process
 * and see the truth. The kill drops whatever the process held: messages it had locked (their locks run out), its
 * store requests being retried, its Supervisor lease, admission places taken by a claim round.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChildStack, type AppProcess, type ChildStack } from "../support/e2eChild";
import { isOperation, serviceUnavailable } from "../support/faultProxy";
import { alternate, FaultRun, type OrderKind } from "../support/faultSuite";
import { pollUntil } from "../support/wait";

let stack: ChildStack;
let app: AppProcess;
let run: FaultRun;

beforeAll(async () => {
  stack = await startChildStack({ faultProxies: true });
  app = await stack.startApp();
  run = new FaultRun({ emulators: stack.emulators, appUrl: () => (app.running ? app.url : undefined) });
  // Every trigger attached and working before any fault.
  const warm = await run.plan("KWARM", ["none", "none"]);
  await run.submit(warm, alternate);
  await run.settle(warm, 60_000);
}, 120_000);
afterAll(async () => {
  await run?.close();
  await stack?.stop();
});

const BEFORE: OrderKind[] = ["none", "declined", "none", "none"];
const DURING: OrderKind[] = ["none", "declined", "none", "undoRefused", "none", "none", "none", "declined"];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("the app killed during a store outage", () => {
  it("SIGKILL 3 s into 12 s of Cosmos DB 503s, restarted during them: every accepted order ends, once", async () => {
    const before = await run.plan("KILL", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("KILL", DURING);
    const from = Date.now();
    const rule = stack.proxies!.cosmos.add({
      name: "503",
      path: /\/docs/,
      when: isOperation("create", "upsert", "replace", "patch", "delete", "query", "read"),
      action: { kind: "status", error: serviceUnavailable() },
      durationMs: 12_000,
    });
    run.submitInBackground(during, alternate);
    await sleep(3_000);
    const killedAt = Date.now();
    await app.kill();
    await sleep(1_000);
    await app.start();
    const readyAt = Date.now();
    run.faultWindow(killedAt, readyAt);
    // Started while the store still answers 503: the restarted app is up and takes requests before it ends.
    expect(rule.active).toBe(true);
    await pollUntil(
      () => rule.active,
      (active) => !active,
      () => "the 503s still on",
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    run.faultWindow(from, Date.now());
    expect(rule.hits).toBeGreaterThan(0);

    const orders = [...before, ...during];
    await run.expectEndedAsPlanned("kill during cosmos 503", orders, 150_000);
  }, 240_000);
});
