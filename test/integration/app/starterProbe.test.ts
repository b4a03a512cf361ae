/**
 * Who makes the probe when a service's breaker is due for one, against the embedded emulators. A few orders
 * whose own calls keep failing can open a breaker; if they also made every probe, each probe would fail again and
 * the outage would never end for the orders behind them. So the starter lets an order whose calls did not fail
 * on that service probe first, and defers the suspects until its answer is in.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  breakerRecordId,
  closedBreaker,
  orderWorkflowV1,
  submit,
  type BreakerRecord,
} from "../../../src/domain";
import { ServiceBreaker } from "../../../src/remote/sharedBreaker";
import { claimAndStart } from "../../../src/scheduler/starter";
import { at, sampleOrder } from "../../support/domain";
import { startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
let containers: AppStack["containers"];

beforeAll(async () => {
  stack = await startAppStack({ MAX_IN_FLIGHT: "5" });
  containers = stack.containers;
});
afterAll(() => stack?.stop());

it("lets an order whose calls did not fail on the service probe, and defers the orders whose calls did", async () => {
  const service = orderWorkflowV1.steps[0]!.agent;
  const now = at(1000);
  // The suspects are the oldest and have no more failures than the fresh order: by age and failures alone,
  // one of them would probe.
  for (const [orderId, createdAt] of [
    ["SUSPECT-1", at(10)],
    ["SUSPECT-2", at(11)],
    ["FRESH-1", at(12)],
  ] as const) {
    await stack.deps.states.create(
      submit(sampleOrder({ orderId, replyTo: "status-demo" }), { now: createdAt, workflow: orderWorkflowV1 }),
    );
  }
  // Opened by the suspects' failures (and one other order's), and due for its probe now.
  const id = breakerRecordId(service);
  const open: BreakerRecord = {
    ...closedBreaker(service, at(900)),
    state: "open",
    failures: 5,
    failingOrders: ["SUSPECT-1", "SUSPECT-2", "GONE-1"],
    openedAt: at(900).toISOString(),
    retryAt: at(990).toISOString(),
    outages: 1,
  };
  await containers.leases.items.upsert({ ...open, id, orderId: id });

  const breakers = new Map<string, ServiceBreaker>();
  const deps = {
    ...stack.deps,
    now: () => now,
    breaker: (agent: typeof service) => {
      let b = breakers.get(agent);
      if (!b) {
        b = new ServiceBreaker(agent, {
          container: containers.leases,
          settings: { openSeconds: 10, callTimeoutSeconds: 1 },
          notifications: stack.deps.notifications,
          counts: { waiting: async () => 3, parked: async () => 0, outlasted: async () => 0 },
          now: () => now,
        });
        breakers.set(agent, b);
      }
      return b;
    },
  };
  const started: string[] = [];
  const report = await claimAndStart(deps, stack.context("starter"), async (instanceId) => {
    started.push(instanceId);
  });

  expect(started).toEqual(["FRESH-1:1"]);
  expect(report).toMatchObject({ claimed: 1, deferred: 2 });
  for (const orderId of ["SUSPECT-1", "SUSPECT-2"]) {
    const record = await stack.deps.states.get(orderId);
    expect(record).toMatchObject({ processState: "Pending", attempt: 0, failureCount: 0 });
    // Until the probe has had its call's time, plus the margin.
    expect(Date.parse(record!.retryAt!)).toBeGreaterThan(now.getTime());
    expect(record!.history.at(-1)).toMatchObject({ event: "deferred", by: "starter" });
  }
});
