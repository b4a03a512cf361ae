/**
 * Failure catalogue: the app process is killed (SIGKILL) while steps are in flight, then started again on the same
 * data directory. The app runs in a child process; the emulators stay in this one, so they outlive the kill.
 */
import { expect } from "vitest";
import { orderWorkflowV1, type StateRecord } from "../../src/domain";
import { e2eOrder } from "../support/e2eOrders";
import { faultOn, processedLedger, stepIndex, stepStatusesAt } from "../support/expectedProcess";
import { submitTo, type ChildStack } from "../support/e2eChild";
import { childStackTest as it } from "../support/fixtures";
import { pollUntil } from "../support/wait";

async function faultHits(stack: ChildStack, orderId: string): Promise<number> {
  const faults = await stack.faults.list();
  return faults.filter((f) => f.orderId === orderId).reduce((sum, f) => sum + f.hits, 0);
}

/** Polls every 50 ms for up to `timeoutMs` (15 s unless told), failing with `what` and the last value read. */
const poll = <T>(read: () => Promise<T>, what: string, timeoutMs = 15_000) =>
  expect.poll(read, { timeout: timeoutMs, interval: 50, message: what });

const stepStatuses = (record: StateRecord | null) => record?.steps.map((s) => s.status);

/** From the declaration: the step held by a slow answer (the charge), and the last, whose call hangs. */
const CHARGE = stepIndex("chargePayment");
const LAST = orderWorkflowV1.steps.length - 1;

it("resumes after a SIGKILL mid-step: every order Processed, each effect applied once, nothing lost", async ({
  stack,
}) => {
  const first = await stack.startApp();
  // hung: the call of its last step (in the sample, the booking) never answers. held: its charge answers only
  // after 1.5 s, which is past the agent's 1 s per call, and lands even when the caller is gone by then. Either
  // keeps its step in flight until the step's 3 s deadline, so the kill finds both mid-step. busy runs
  // unhindered; late arrives while the app is down.
  const hung = e2eOrder("KILL-HUNG");
  const held = e2eOrder("KILL-HELD");
  const busy = e2eOrder("KILL-BUSY");
  const late = e2eOrder("KILL-LATE");
  await stack.faults.add({ ...faultOn(LAST), orderId: hung.orderId, kind: "hang" });
  await stack.faults.add({
    ...faultOn(CHARGE),
    orderId: held.orderId,
    kind: "latency",
    latencyMs: 1500,
  });

  expect((await submitTo(first, hung)).status).toBe(202);
  await poll(() => faultHits(stack, hung.orderId), "hung's last call reached the simulator").toBeGreaterThan(
    0,
  );
  expect((await submitTo(first, held)).status).toBe(202);
  expect((await submitTo(first, busy)).status).toBe(202);
  await poll(() => faultHits(stack, held.orderId), "held's charge reached the simulator").toBeGreaterThan(0);
  await poll(() => stack.state(busy.orderId), "busy was accepted").not.toBeNull();

  await first.kill();
  await stack.faults.clear();

  // Nothing writes while no app runs, so the store shows the moment of the kill: both held orders mid-step.
  const heldAtKill = await stack.state(held.orderId);
  const hungAtKill = await stack.state(hung.orderId);
  expect(heldAtKill).toMatchObject({ processState: "Processing", attempt: 1 });
  expect(stepStatuses(heldAtKill)).toEqual(stepStatusesAt(CHARGE, "Dispatched"));
  expect(hungAtKill).toMatchObject({ processState: "Processing", attempt: 1 });
  expect(stepStatuses(hungAtKill)).toEqual(stepStatusesAt(LAST, "Dispatched"));

  // The charge the dead process asked for lands anyway, while no app runs.
  await poll(
    async () => (await stack.ledger(held.orderId)).some((e) => e.operation === "charge" && e.applied),
    "held's charge applied",
    5_000,
  ).toBe(true);

  // An order submitted while the app is down waits on the orders queue.
  const sender = stack.bus.createSender("orders");
  await sender.sendMessages({ body: late, messageId: late.orderId, contentType: "application/json" });
  await sender.close();

  const second = await stack.startApp({ dataDir: first.dataDir });
  expect(second.pid).not.toBe(first.pid);

  const orders = [hung, held, busy, late];
  // A kill during a claim round may leave an admission place taken: it comes back at its check, one claim timeout
  // later.
  const records = await Promise.all(orders.map((o) => stack.waitForState(o.orderId, ["Processed"], 60_000)));
  for (const record of records) {
    expect(record).toMatchObject({
      lockedBy: null,
      completeBy: null,
      workflow: { name: "order", version: 1 },
    });
    expect(stepStatuses(record)).toEqual(orderWorkflowV1.steps.map(() => "Succeeded"));
  }

  // The interrupted attempts: the restarted engine replayed their orchestrations from the task hub and let them
  // reach their deadline; the Supervisor expired them and the next attempt finished the order.
  for (const order of [held, hung]) {
    const record = records[orders.indexOf(order)]!;
    expect(record.attempt).toBeGreaterThanOrEqual(2);
    expect(record.history).toContainEqual(
      expect.objectContaining({ event: "expired", by: "supervisor", attempt: 1 }),
    );
    const res = await fetch(
      `${second.url}/runtime/webhooks/durabletask/instances/${encodeURIComponent(`${order.orderId}:1`)}`,
      { headers: { "x-functions-key": second.durableKey } },
    );
    expect(await res.json()).toMatchObject({ runtimeStatus: "Completed", output: { outcome: "timedOut" } });
  }
  expect(records[orders.indexOf(late)]).toMatchObject({ attempt: 1, failureCount: 0 });

  // Each side effect once per idempotency key, in step order; held's charge was asked for again after the
  // restart and answered from the stored response.
  for (const order of orders) {
    const ledger = await stack.ledger(order.orderId);
    expect(ledger.map((e) => e.idempotencyKey)).toEqual(
      processedLedger(order.orderId).map((call) => call.idempotencyKey),
    );
    expect(ledger.every((e) => e.applied && e.status === 200)).toBe(true);
  }
  const heldCharge = (await stack.ledger(held.orderId)).find((e) => e.operation === "charge")!;
  expect(heldCharge.requests).toBeGreaterThanOrEqual(2);

  // No alerts; every submitter hears "processed" (status messages are at least once: a replayed activity
  // may repeat one).
  expect(await stack.drain("alerts")).toEqual([]);
  // Status messages are sent after the write they announce, and a drain takes what has arrived by then: read the
  // queue until each order's "processed" is there.
  const statuses: Array<{ orderId: string; status: string }> = [];
  const unheard = () =>
    orders.filter((o) => !statuses.some((s) => s.orderId === o.orderId && s.status === "processed"));
  await pollUntil(
    async () => {
      statuses.push(...((await stack.drain("status-demo")) as typeof statuses));
      return unheard();
    },
    (missing) => missing.length === 0,
    (missing) => `no "processed" status for ${missing.map((o) => o.orderId).join(", ")}`,
    { timeoutMs: 15_000, intervalMs: 100 },
  );
}, 120_000);
