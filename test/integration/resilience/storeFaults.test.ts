/**
 * The app's own clients (src/store/cosmos.ts, serviceBus.ts: built by createDependencies) through the fault
 * proxies, against the embedded emulators: what a fault of the store or the bus does to a call of the app. The
 * bare SDK's behaviour under the same faults is pinned in test/integration/support/faultProxy.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDependencies, type Dependencies } from "../../../src/app/dependencies";
import { loadConfig } from "../../../src/config";
import { orderWorkflowV1 } from "../../../src/domain";
import { STORE_CALLS } from "../../../src/resilience/infraResilience";
import { at, pendingRecord, sampleOrder } from "../../support/domain";
import {
  isOperation,
  serviceUnavailable,
  startFaultyStack,
  throttled,
  type FaultyStack,
} from "../../support/faultProxy";

let faulty: FaultyStack;
let deps: Dependencies;
/** The same app's clients straight to the emulators: the truth, whatever the proxies do. */
let truth: Dependencies;

beforeAll(async () => {
  faulty = await startFaultyStack();
  deps = createDependencies(loadConfig(faulty.appSettings()));
  truth = createDependencies(loadConfig(faulty.stack.appSettings()));
});
afterAll(async () => {
  await deps?.close();
  await truth?.close();
  await faulty?.stop();
});

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  return { value: await work, ms: Date.now() - start };
}

describe("a store call of the app", () => {
  it("rides out a burst of 503s on a write: the write lands once, within the retry budget", async () => {
    const rule = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "status", error: serviceUnavailable() },
      count: 4,
    });
    const record = pendingRecord(sampleOrder({ orderId: "FAULT-503" }), orderWorkflowV1);
    const { value, ms } = await timed(deps.states.create(record));
    expect(value.created).toBe(true);
    expect(ms).toBeLessThan(STORE_CALLS.retryBudgetMs);
    expect(rule.hits).toBe(4);
    expect(await truth.states.get("FAULT-503")).toMatchObject({
      orderId: "FAULT-503",
      processState: "Pending",
    });
  });

  it("cuts a stalled request after its try timeout and tries again", async () => {
    await truth.states.create(pendingRecord(sampleOrder({ orderId: "FAULT-STALL" }), orderWorkflowV1));
    const rule = faulty.proxies.cosmos.add({
      when: isOperation("read"),
      path: /FAULT-STALL/,
      action: { kind: "stall" },
      count: 1,
    });
    const { value, ms } = await timed(deps.states.get("FAULT-STALL"));
    expect(value).toMatchObject({ orderId: "FAULT-STALL" });
    expect(rule.hits).toBe(1);
    // One try's timeout and a short back-off; never the SDK's default minute.
    expect(ms).toBeGreaterThanOrEqual(STORE_CALLS.tryTimeoutMs - 100);
    expect(ms).toBeLessThan(STORE_CALLS.tryTimeoutMs + 5_000);
  });

  it("leaves 429 to the SDK's own throttling retries, which honour the service's retry-after", async () => {
    const rule = faulty.proxies.cosmos.add({
      when: isOperation("create"),
      action: { kind: "status", error: throttled(20) },
      count: 3,
    });
    expect(
      (await deps.states.create(pendingRecord(sampleOrder({ orderId: "FAULT-429" }), orderWorkflowV1)))
        .created,
    ).toBe(true);
    expect(rule.hits).toBe(3);
  });

  it("reports a fault that outlasts the budget to its caller, and notes it for the Supervisor", async () => {
    faulty.proxies.cosmos.add({
      when: isOperation("create"),
      path: /colls\/orders\//,
      action: { kind: "status", error: serviceUnavailable() },
      durationMs: STORE_CALLS.retryBudgetMs + 5_000,
    });
    const started = new Date();
    const { ms, value } = await timed(
      deps.orders.ensure(sampleOrder({ orderId: "FAULT-LONG" }), at(0)).then(
        () => undefined,
        (error: unknown) => error as { code?: unknown },
      ),
    );
    expect(value?.code).toBe(503);
    expect(ms).toBeGreaterThanOrEqual(STORE_CALLS.retryBudgetMs - 2 * STORE_CALLS.maxBackoffMs);
    expect(ms).toBeLessThan(STORE_CALLS.retryBudgetMs + STORE_CALLS.tryTimeoutMs);
    expect(await deps.infraFaults.faultSince(started)).toMatchObject({
      part: "store",
      detail: "store 503: the store answered 503",
    });
    faulty.proxies.cosmos.clear();
    // The record of faults reaches the other instances once written.
    await deps.infraFaults.flush();
    expect(await truth.infraFaults.faultSince(started)).toMatchObject({ part: "store" });
  }, 60_000);
});
