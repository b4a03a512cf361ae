/**
 * The orders of end-to-end tests and what a test checks of them: an order under an id of its own, submitted with
 * its faults armed, its documents and ledger as a user sees them, the effects a processed order leaves.
 */
import { expect } from "vitest";
import { sampleOrder } from "./domain";
import type { E2E, FaultSpec, InjectedFault, LedgerEntry } from "./e2e";
import { faultOn, processedLedger, stepIndex } from "./expectedProcess";

/** A predicate matching queue messages (status, alerts) about one order. */
export const forOrder =
  (orderId: string) =>
  (m: unknown): boolean =>
    (m as { orderId?: unknown } | null)?.orderId === orderId;

let counter = 0;
/**
 * The tests' sample order (domain.ts) under an id no other order of this run has, with `overrides` on top; they
 * may be of any type, for the tests of refused input.
 */
export function e2eOrder(
  prefix: string,
  overrides: Record<string, unknown> = {},
): { orderId: string } & Record<string, unknown> {
  return { ...sampleOrder({ orderId: `${prefix}-${process.pid}-${++counter}` }), ...overrides };
}

/**
 * Arms each fault for this order alone, then submits it through the front door: the start of every test of a
 * failure. Fails unless the order is accepted (202); resolves with the armed faults (their ids, for `remove`).
 */
export async function submitWithFaults(
  e2e: E2E,
  order: { orderId: string },
  ...faults: Array<Omit<FaultSpec, "orderId">>
): Promise<InjectedFault[]> {
  const armed: InjectedFault[] = [];
  for (const fault of faults) armed.push(await e2e.faults.add({ ...fault, orderId: order.orderId }));
  const res = await e2e.submit(order);
  if (res.status !== 202) throw new Error(`submitting ${order.orderId}: ${res.status} ${await res.text()}`);
  return armed;
}

/**
 * An order the Supervisor recovers: every call of its first attempt's payment step (chargePayment in the
 * declaration) fails (AGENT_MAX_ATTEMPTS=3), the agent replies transient, the attempt ends early with a deadline
 * notice, and attempt 2 finishes it. Resolves once it is Processed.
 */
export async function submitRecoveredOrder(e2e: E2E, prefix: string): Promise<{ orderId: string }> {
  const order = e2eOrder(prefix);
  await submitWithFaults(e2e, order, {
    ...faultOn(stepIndex("chargePayment")),
    kind: "transient",
    count: 3,
  });
  await e2e.waitForState(order.orderId, ["Processed"], 30_000);
  return order;
}

/** What a user checks to see that nothing happened to an order: its documents as the API shows them, and its ledger. */
export async function orderSnapshot(
  e2e: E2E,
  orderId: string,
): Promise<{ order: unknown; state: unknown; ledger: LedgerEntry[] }> {
  const res = await e2e.api(`/api/orders/${encodeURIComponent(orderId)}`);
  const body =
    res.status === 404
      ? { order: null, state: null }
      : ((await res.json()) as { order: unknown; state: unknown });
  return { order: body.order, state: body.state, ledger: await e2e.ledger(orderId) };
}

/**
 * The happy path's effects on the remote services: each step of the declaration's forward call (for the sample:
 * reserve, charge and book), in order, each applied once from one request.
 */
export async function expectOneSetOfEffects(
  harness: { ledger(orderId: string): Promise<LedgerEntry[]> },
  orderId: string,
): Promise<void> {
  const ledger = await harness.ledger(orderId);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied, e.requests])).toEqual(
    processedLedger(orderId).map((call) => [call.idempotencyKey, true, 1]),
  );
}
