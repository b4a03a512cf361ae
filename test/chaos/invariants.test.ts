/**
 * The soak's invariant checks must be able to fail: each one is fed evidence with exactly the defect it exists to
 * catch (a step done twice, an undo out of order, an applied step never undone, a missing alert, a lost order, an
 * order past its bound), and must name the order. The same checks then pass on the corrected evidence.
 */
import { describe, expect, it } from "vitest";
import { orderWorkflowV1, submit, type ProcessState, type StateRecord } from "../../src/domain";
import type { PlannedOrder } from "../../tools/soak/faultPlan";
import {
  checkInvariants,
  deriveBound,
  scheduleIntervalSeconds,
  type RunEvidence,
} from "../../tools/soak/invariants";
import { SOAK_TIMINGS } from "../../tools/soak/soak";
import { sampleOrder } from "../../tools/sampleOrders";
import { seededRandom } from "../../tools/seededRandom";
import type { LedgerEntry } from "../../tools/simulator";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
/** The declared process's steps (src/domain/process.ts), which the invariants read the keys against. */
const STEPS = orderWorkflowV1.steps;
const LAST = STEPS.length - 1;
const name = (step: number): string => STEPS[step]!.name;

function planned(i: number, declined = false): PlannedOrder {
  const order = sampleOrder(i, { prefix: "INV", random: seededRandom(i), declined: declined ? 1 : 0 });
  return { order, scenario: declined ? "declined" : "none", faults: [], expected: "Processed", declined };
}

function record(p: PlannedOrder, state: ProcessState, endSeconds = 10): StateRecord {
  const base = submit(p.order, { now: new Date(T0), workflow: orderWorkflowV1 });
  return {
    ...base,
    processState: state,
    attempt: 1,
    history: [
      ...base.history,
      { at: iso(1), event: "claimed", by: "starter", from: "Pending", to: "Processing", attempt: 1 },
    ],
    updatedAt: iso(endSeconds),
  };
}

/** The ledger entry of step `step`'s do or undo for the order, as the simulator records it. */
function entry(p: PlannedOrder, step: number, kind: "do" | "undo", applied = true): LedgerEntry {
  const { agent, doOperation, undoOperation } = STEPS[step]!;
  const operation = kind === "do" ? doOperation : undoOperation;
  if (operation === undefined) throw new Error(`step ${name(step)} declares no undo`);
  return {
    service: agent,
    operation,
    idempotencyKey: `${p.order.orderId}:${name(step)}:${kind}`,
    orderId: p.order.orderId,
    requests: 1,
    applied,
    status: applied ? 200 : 402,
    firstAt: iso(2),
    lastAt: iso(2),
    effect: {},
    traceparent: null,
  };
}

/** Stock as the inventory holds it after the given orders' reservations. */
function stockAfter(held: PlannedOrder[]): Map<string, number> {
  const stock = new Map<string, number>();
  for (const p of held)
    for (const item of p.order.items) stock.set(item.sku, (stock.get(item.sku) ?? 1000) - item.quantity);
  return stock;
}

/**
 * A healthy run: one order Processed; one Compensated (its last step refused, every earlier one undone in
 * reverse); one Error with its alert.
 */
function healthy(): RunEvidence {
  const processed = planned(1);
  const compensated = planned(2);
  const failed = planned(3);
  return {
    planned: [processed, compensated, failed],
    accepted: [processed, compensated, failed].map((p) => ({
      orderId: p.order.orderId,
      submittedAt: T0,
      acceptedAt: T0,
      requests: 1,
    })),
    records: [record(processed, "Processed"), record(compensated, "Compensated"), record(failed, "Error")],
    ledger: [
      ...STEPS.map((_, i) => entry(processed, i, "do")),
      ...STEPS.map((_, i) => entry(compensated, i, "do", i < LAST)),
      ...STEPS.slice(0, LAST).map((_, i) => entry(compensated, LAST - 1 - i, "undo")),
      entry(failed, 0, "do"),
    ],
    alerts: [
      {
        kind: "Error",
        orderId: failed.order.orderId,
        processState: "Error",
        reason: "retries exhausted",
        at: iso(10),
      },
    ],
    kills: [],
    bound: deriveBound(SOAK_TIMINGS),
    stock: stockAfter([processed, failed]),
    defaultStock: 1000,
  };
}

const violations = (evidence: RunEvidence) => checkInvariants(evidence).violations;

describe("soak invariants", () => {
  it("pass on a run where everything went right", () => {
    expect(violations(healthy())).toEqual([]);
  });

  it("catch a lost order, an order still in flight and one past its bound", () => {
    const evidence = healthy();
    const [a, b, c] = evidence.records as [StateRecord, StateRecord, StateRecord];
    // Past the bound (144 s for three steps) whatever the declared process's length: claimed at 1 s, ended here.
    const bound = deriveBound(SOAK_TIMINGS).seconds;
    const end = bound + 356;
    evidence.records = [
      { ...a, updatedAt: iso(end) },
      { ...b, processState: "Compensating" },
    ];
    const found = violations(evidence);
    expect(found).toContainEqual(
      expect.stringMatching(new RegExp(`${c.orderId} was accepted \\(202\\) but has no state record`)),
    );
    expect(found).toContainEqual(expect.stringMatching(new RegExp(`${b.orderId} is still Compensating`)));
    expect(found).toContainEqual(
      expect.stringMatching(
        new RegExp(`${a.orderId} took ${(end - 1).toFixed(1)} s .* the bound is ${bound.toFixed(1)} s`),
      ),
    );
  });

  it("catch a step applied twice (the stock shows it) and a key that is not a step of its order", () => {
    const evidence = healthy();
    const processed = evidence.planned[0]!;
    evidence.stock = stockAfter([processed, processed, evidence.planned[2]!]);
    evidence.ledger = [
      ...evidence.ledger,
      {
        ...entry(processed, LAST, "do"),
        idempotencyKey: `${processed.order.orderId}:${name(LAST)}:do:2`,
      },
    ];
    const found = violations(evidence);
    expect(found).toContainEqual(
      expect.stringMatching(
        /inventory stock matches .*: SKU-\d+: \d+ available, but the ledger's active reservations leave \d+/,
      ),
    );
    expect(found).toContainEqual(
      expect.stringMatching(new RegExp(`${name(LAST)}:do:2 is not <orderId>:<step>:do\\|undo`)),
    );
  });

  it("catch an undo out of reverse order and an applied step never undone", () => {
    const evidence = healthy();
    const compensated = evidence.planned[1]!;
    const others = evidence.ledger.filter(
      (e) => e.orderId !== compensated.order.orderId || e.idempotencyKey.endsWith(":do"),
    );
    // The first two steps undone in the order they ran, not in reverse.
    evidence.ledger = [...others, entry(compensated, 0, "undo"), entry(compensated, 1, "undo")];
    expect(violations(evidence)).toContainEqual(
      expect.stringMatching(new RegExp(`undo order ${name(0)} → ${name(1)} is not the reverse`)),
    );
    // The newest applied step (the one before the refused last) left out of the undos.
    evidence.ledger = [
      ...others,
      ...STEPS.slice(0, LAST - 1).map((_, i) => entry(compensated, LAST - 2 - i, "undo")),
    ];
    expect(violations(evidence)).toContainEqual(
      expect.stringMatching(
        new RegExp(`${compensated.order.orderId}: ${name(LAST - 1)} was applied and never undone`),
      ),
    );
  });

  it("catch a missing alert, an alert for an order not in that state, a declined order Processed", () => {
    const evidence = healthy();
    const declined = planned(4, true);
    evidence.planned = [...evidence.planned, declined];
    evidence.accepted = [
      ...evidence.accepted,
      { orderId: declined.order.orderId, submittedAt: T0, acceptedAt: T0, requests: 1 },
    ];
    evidence.records = [...evidence.records, record(declined, "Processed")];
    evidence.ledger = [...evidence.ledger, ...STEPS.map((_, i) => entry(declined, i, "do"))];
    evidence.stock = stockAfter([evidence.planned[0]!, evidence.planned[2]!, declined]);
    evidence.alerts = [
      {
        kind: "CompensationFailed",
        orderId: evidence.planned[0]!.order.orderId,
        processState: "CompensationFailed",
        reason: "x",
        at: iso(9),
      },
    ];
    const found = violations(evidence);
    expect(found).toContainEqual(
      expect.stringMatching(
        new RegExp(`${evidence.planned[2]!.order.orderId} is Error but no Error alert names it`),
      ),
    );
    expect(found).toContainEqual(
      expect.stringMatching(
        new RegExp(`CompensationFailed alert for ${evidence.planned[0]!.order.orderId}, which is Processed`),
      ),
    );
    // Two alerts for one decision (a re-send the queue did not drop) is a violation too.
    const errored = evidence.planned[2]!.order.orderId;
    const twice = {
      kind: "Error",
      orderId: errored,
      processState: "Error",
      reason: "x",
      at: iso(9),
    } as const;
    expect(violations({ ...evidence, alerts: [twice, twice] })).toContainEqual(
      `every Error and CompensationFailed order has exactly one alert: ${errored} is Error and 2 Error alerts name it`,
    );
    expect(found).toContainEqual(
      expect.stringMatching(new RegExp(`${declined.order.orderId} was declined yet Processed`)),
    );
  });

  it("derive the bound from the settings, and refuse a schedule without a fixed interval", () => {
    expect(scheduleIntervalSeconds("*/5 * * * * *")).toBe(5);
    expect(scheduleIntervalSeconds("0 */2 * * * *")).toBe(120);
    expect(() => scheduleIntervalSeconds("0 0 9 * * MON")).toThrow(/cannot derive a fixed interval/);
    // 2 × 3 attempts × (claim 5 + steps × 3 + sweep 1 + back-off 4·2 + starter 1), on the declared process's steps
    const steps = orderWorkflowV1.steps.length;
    expect(deriveBound(SOAK_TIMINGS).seconds).toBe(2 * 3 * (5 + steps * 3 + 1 + 4 * 2 + 1));
    expect(deriveBound(SOAK_TIMINGS, 3).seconds).toBe(144);
  });
});
