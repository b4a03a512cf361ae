/**
 * The invariants of a soak run, checked from outside the app against what the user-visible systems hold: the
 * state store, the remote services' ledger and stock, and the alerts queue. Each check returns the violations
 * it found, named by order, so a failed run says exactly what went wrong.
 */
import {
  BREAKER,
  hasUndo,
  longestOrder,
  PARK_JITTER_SECONDS,
  scheduleIntervalSeconds,
  SERVICE_ALERT_KINDS,
  TERMINAL_STATES,
  type ProcessState,
  type StateRecord,
  type TimingInputs,
} from "../../src/domain";
import { orderWorkflowV1 } from "../../src/domain/process";
import type { LedgerEntry } from "../simulator";
import type { ObservedAlert } from "./observe";
import type { PlannedOrder } from "./faultPlan";
import type { Acceptance } from "./submitter";

const STEP_NAMES = orderWorkflowV1.steps.map((s) => s.name);

// ---------------------------------------------------------------------------------------------- the bound

// The schedules' periods, as the timing formulas read them (src/domain/timingBudget.ts); kept here for the soak's
// callers.
export { scheduleIntervalSeconds };

export interface Bound {
  /** Seconds from an order's first claim to its terminal state, without process kills. */
  seconds: number;
  /** Seconds added for each kill that happens while the order is under way. */
  perKillSeconds: (downtimeSeconds: number) => number;
  /**
   * Seconds added for each outage a service's breaker declared (ServiceUnavailable to ServiceRecovered) while the
   * order was under way: parked orders wait it out, then for the probe window, their jitter and a starter round.
   */
  perOutageSeconds: (outageSeconds: number) => number;
  /** How the figure was derived, for the summary. */
  explanation: string;
}

/**
 * The longest an order may take from its first claim to a terminal state, from the settings alone: the timing
 * formulas' `longestOrder` (src/domain/timingBudget.ts says how it is derived). A kill adds its downtime, a claim
 * timeout (an admission place the killed process had taken, or had not given back yet, comes back when its check
 * is due) and the Supervisor's leader lease it held.
 */
export function deriveBound(settings: Record<string, string>, steps = STEP_NAMES.length): Bound {
  const n = (name: string): number => {
    const value = Number(settings[name]);
    if (!Number.isFinite(value)) throw new Error(`setting ${name} is missing or not a number`);
    return value;
  };
  const inputs: Omit<TimingInputs, "pageSize"> = {
    stepTimeoutSeconds: n("STEP_TIMEOUT_SECONDS"),
    claimTimeoutSeconds: n("CLAIM_TIMEOUT_SECONDS"),
    supervisorIntervalSeconds: scheduleIntervalSeconds(settings.SUPERVISOR_SCHEDULE ?? ""),
    starterIntervalSeconds: scheduleIntervalSeconds(settings.STARTER_SCHEDULE ?? ""),
    backoffBaseSeconds: n("SUPERVISOR_BACKOFF_SECONDS"),
    maxFailures: n("SUPERVISOR_MAX_FAILURES"),
    steps,
  };
  const { seconds, largestBackoffSeconds: backoffMax } = longestOrder(inputs);
  const { claimTimeoutSeconds: claim, stepTimeoutSeconds: step, maxFailures } = inputs;
  const { supervisorIntervalSeconds: supervisor, starterIntervalSeconds: starter } = inputs;
  const supervisorLease = n("SUPERVISOR_LEASE_SECONDS");
  return {
    seconds,
    perKillSeconds: (downtime) => downtime + claim + supervisorLease,
    perOutageSeconds: (outage) =>
      outage +
      n("AGENT_ATTEMPT_TIMEOUT_SECONDS") +
      BREAKER.probeMarginSeconds +
      PARK_JITTER_SECONDS +
      starter,
    explanation:
      `2 (forward, compensation) × (SUPERVISOR_MAX_FAILURES ${maxFailures} + 1) × (CLAIM_TIMEOUT ${claim} + ${steps} steps × STEP_TIMEOUT ${step}` +
      ` + supervisor interval ${supervisor} + max back-off ${backoffMax} + starter interval ${starter}) = ${seconds} s;` +
      ` each kill while the order is under way adds its downtime + CLAIM_TIMEOUT ${claim} (an admission place the kill left taken comes back at its check) + supervisor lease ${supervisorLease} s;` +
      ` each outage a breaker declared adds its length + probe window + jitter ${PARK_JITTER_SECONDS} + starter interval`,
  };
}

// ---------------------------------------------------------------------------------------------- the checks

export interface KillWindow {
  /** Epoch ms of the SIGKILL. */
  killedAt: number;
  /** Epoch ms the restarted app reported "Host started". */
  readyAt: number;
}

export interface RunEvidence {
  planned: readonly PlannedOrder[];
  accepted: readonly Acceptance[];
  records: readonly StateRecord[];
  ledger: readonly LedgerEntry[];
  alerts: readonly ObservedAlert[];
  kills: readonly KillWindow[];
  bound: Bound;
  /** sku → units available now at the inventory service. */
  stock: ReadonlyMap<string, number>;
  /** The inventory service's stock of a sku it was never asked about. */
  defaultStock: number;
}

export interface OrderTiming {
  orderId: string;
  /** Seconds from first claim to the terminal write. */
  elapsed: number;
  /** The bound for this order, kills included. */
  allowed: number;
}

export interface InvariantReport {
  violations: string[];
  /** One line per invariant: its name and how many orders or keys it checked. */
  checked: Array<{ invariant: string; checked: number; violations: number }>;
  timings: OrderTiming[];
}

const isTerminal = (state: ProcessState) => TERMINAL_STATES.includes(state);

/**
 * What an investigator needs of an order that never ended: who holds it, when it is due, its counts, and the
 * last few entries of its audit trail (the app's log of the run has the rest).
 */
function describeStuck(r: StateRecord): string {
  const recent = r.history
    .slice(-4)
    .map((h) => `${h.at} ${h.event} by ${h.by}${h.detail ? ` (${h.detail})` : ""}`)
    .join("; ");
  return (
    `attempt ${r.attempt}, lockedBy ${r.lockedBy ?? "none"}, retryAt ${r.retryAt ?? "none"}, ` +
    `completeBy ${r.completeBy ?? "none"}, failures ${r.failureCount}/${r.compensationFailureCount}, ` +
    `parkedSince ${r.parkedSince ?? "none"}, updatedAt ${r.updatedAt}; last: ${recent}`
  );
}

/** Parses `${orderId}:${step}:${kind}`; undefined when the key is not of that form for this order. */
function parseKey(entry: LedgerEntry): { step: number; kind: "do" | "undo" } | undefined {
  const prefix = `${entry.orderId}:`;
  if (!entry.idempotencyKey.startsWith(prefix)) return undefined;
  const [stepName, kind, ...extra] = entry.idempotencyKey.slice(prefix.length).split(":");
  const step = STEP_NAMES.indexOf(stepName ?? "");
  if (step === -1 || extra.length > 0 || (kind !== "do" && kind !== "undo")) return undefined;
  return { step, kind };
}

export function checkInvariants(evidence: RunEvidence): InvariantReport {
  const report: InvariantReport = { violations: [], checked: [], timings: [] };
  const check = (invariant: string, items: number, run: (fail: (message: string) => void) => void) => {
    const before = report.violations.length;
    run((message) => report.violations.push(`${invariant}: ${message}`));
    report.checked.push({ invariant, checked: items, violations: report.violations.length - before });
  };
  const records = new Map(evidence.records.map((r) => [r.orderId, r]));
  const planned = new Map(evidence.planned.map((p) => [p.order.orderId, p]));
  const byOrder = new Map<string, Array<LedgerEntry & { index: number }>>();
  evidence.ledger.forEach((entry, index) => {
    const list = byOrder.get(entry.orderId) ?? [];
    list.push({ ...entry, index });
    byOrder.set(entry.orderId, list);
  });

  check("every accepted submission is in the state store", evidence.accepted.length, (fail) => {
    for (const a of evidence.accepted)
      if (!records.has(a.orderId)) fail(`${a.orderId} was accepted (202) but has no state record`);
  });

  check("every order is terminal", evidence.records.length, (fail) => {
    for (const r of evidence.records)
      if (!isTerminal(r.processState)) fail(`${r.orderId} is still ${r.processState} (${describeStuck(r)})`);
  });

  const outages = declaredOutages(evidence.alerts);
  check("every order is terminal within the bound", evidence.records.length, (fail) => {
    for (const r of evidence.records) {
      if (!isTerminal(r.processState)) continue;
      const claimed = r.history.find((h) => h.event === "claimed" && h.attempt === 1)?.at ?? r.createdAt;
      const start = Date.parse(claimed);
      const end = Date.parse(r.updatedAt);
      let allowed = evidence.bound.seconds;
      // A kill matters from the SIGKILL until the leases the killed process held have lapsed.
      for (const kill of evidence.kills) {
        const aftermath = kill.readyAt + evidence.bound.perKillSeconds(0) * 1000;
        if (kill.killedAt <= end && aftermath >= start)
          allowed += evidence.bound.perKillSeconds((kill.readyAt - kill.killedAt) / 1000);
      }
      for (const outage of outages) {
        if (outage.from <= end && outage.to >= start)
          allowed += evidence.bound.perOutageSeconds((outage.to - outage.from) / 1000);
      }
      const elapsed = (end - start) / 1000;
      report.timings.push({ orderId: r.orderId, elapsed, allowed });
      if (elapsed > allowed)
        fail(
          `${r.orderId} took ${elapsed.toFixed(1)} s from its first claim to ${r.processState}; the bound is ${allowed.toFixed(1)} s`,
        );
    }
  });

  check(
    "each idempotency key is one step of its order, with one ledger entry",
    evidence.ledger.length,
    (fail) => {
      const seen = new Set<string>();
      for (const entry of evidence.ledger) {
        if (seen.has(entry.idempotencyKey)) fail(`${entry.idempotencyKey} has two ledger entries`);
        seen.add(entry.idempotencyKey);
        if (!parseKey(entry))
          fail(`${entry.idempotencyKey} is not <orderId>:<step>:do|undo for ${entry.orderId}`);
        if (!planned.has(entry.orderId))
          fail(`${entry.idempotencyKey} names an order that was never submitted`);
      }
    },
  );

  check("inventory stock matches one application per applied key", evidence.stock.size, (fail) => {
    const held = new Map<string, number>();
    for (const [orderId, entries] of byOrder) {
      const reserved = entries.some((e) => e.operation === "reserve" && e.applied);
      const released = entries.some((e) => e.operation === "release" && e.applied);
      if (!reserved || released) continue;
      for (const item of planned.get(orderId)?.order.items ?? [])
        held.set(item.sku, (held.get(item.sku) ?? 0) + item.quantity);
    }
    for (const [sku, available] of evidence.stock) {
      const expected = evidence.defaultStock - (held.get(sku) ?? 0);
      if (available !== expected)
        fail(`${sku}: ${available} available, but the ledger's active reservations leave ${expected}`);
    }
  });

  const inState = (state: ProcessState) => evidence.records.filter((r) => r.processState === state);

  check("a Processed order applied every step once and undid none", inState("Processed").length, (fail) => {
    for (const r of inState("Processed")) {
      const entries = byOrder.get(r.orderId) ?? [];
      for (let step = 0; step < STEP_NAMES.length; step++) {
        const done = entries.find((e) => parseKey(e)?.step === step && parseKey(e)?.kind === "do");
        if (!done?.applied) fail(`${r.orderId} is Processed but ${STEP_NAMES[step]} was not applied`);
      }
      const undone = entries.filter((e) => parseKey(e)?.kind === "undo");
      if (undone.length > 0)
        fail(`${r.orderId} is Processed but has undo keys ${undone.map((e) => e.idempotencyKey).join(", ")}`);
    }
  });

  check(
    "a Compensated order undid every applied step that declares an undo, in reverse order",
    inState("Compensated").length,
    (fail) => {
      for (const r of inState("Compensated")) {
        const entries = byOrder.get(r.orderId) ?? [];
        const undos = entries.filter((e) => parseKey(e)?.kind === "undo");
        const undoSteps = undos.map((e) => parseKey(e)!.step);
        for (let i = 1; i < undoSteps.length; i++) {
          if (undoSteps[i]! >= undoSteps[i - 1]!)
            fail(
              `${r.orderId}: undo order ${undos.map((e) => STEP_NAMES[parseKey(e)!.step]).join(" → ")} is not the reverse of the steps`,
            );
        }
        for (const done of entries.filter((e) => parseKey(e)?.kind === "do" && e.applied)) {
          const step = parseKey(done)!.step;
          if (!hasUndo(orderWorkflowV1.steps[step]!)) continue;
          const undo = undos.find((e) => parseKey(e)!.step === step);
          if (!undo) fail(`${r.orderId}: ${STEP_NAMES[step]} was applied and never undone`);
          else if (!undo.applied)
            fail(
              `${r.orderId}: the undo of ${STEP_NAMES[step]} reversed nothing although the step was applied`,
            );
          else if (undo.index < done.index)
            fail(`${r.orderId}: ${STEP_NAMES[step]} was undone before it was applied`);
        }
      }
    },
  );

  const needsAlert = evidence.records.filter(
    (r) => r.processState === "Error" || r.processState === "CompensationFailed",
  );
  check("every Error and CompensationFailed order has exactly one alert", needsAlert.length, (fail) => {
    for (const r of needsAlert) {
      const sent = evidence.alerts.filter((a) => a.orderId === r.orderId && a.kind === r.processState).length;
      if (sent === 0) fail(`${r.orderId} is ${r.processState} but no ${r.processState} alert names it`);
      else if (sent > 1)
        fail(`${r.orderId} is ${r.processState} and ${sent} ${r.processState} alerts name it`);
    }
  });

  const serviceAlerts = evidence.alerts.filter((a) => SERVICE_ALERT_KINDS.includes(a.kind as never));
  check(
    "each outage a breaker declared is alerted once each way, recovery after unavailability",
    serviceAlerts.length,
    (fail) => {
      const seen = new Map<string, ObservedAlert>();
      for (const a of serviceAlerts) {
        if (!a.service || !a.messageId?.startsWith(`breaker:${a.service}:`) || a.orderId !== null)
          fail(`${a.kind} alert without its service and MessageId: ${JSON.stringify(a)}`);
        else if (seen.has(a.messageId)) fail(`two alerts with MessageId ${a.messageId}`);
        else seen.set(a.messageId, a);
      }
      for (const [id, a] of seen) {
        if (a.kind !== "ServiceRecovered") continue;
        const opened = seen.get(id.replace(/ServiceRecovered$/, "ServiceUnavailable"));
        if (!opened) fail(`${id} has no ServiceUnavailable before it`);
        else if (opened.at > a.at) fail(`${id} is dated before its ServiceUnavailable`);
      }
    },
  );

  check(
    "every alert is for an order in that state",
    evidence.alerts.length - serviceAlerts.length,
    (fail) => {
      for (const a of evidence.alerts) {
        if (serviceAlerts.includes(a)) continue;
        const state = a.orderId ? records.get(a.orderId)?.processState : undefined;
        if (a.kind !== "Error" && a.kind !== "CompensationFailed")
          fail(`unexpected ${a.kind} alert: ${a.reason}`);
        else if (state !== a.kind)
          fail(`${a.kind} alert for ${a.orderId ?? "no order"}, which is ${state ?? "unknown"}`);
      }
    },
  );

  const declined = evidence.planned.filter((p) => p.declined);
  check("an order over the payment limit is never Processed", declined.length, (fail) => {
    for (const p of declined)
      if (records.get(p.order.orderId)?.processState === "Processed")
        fail(`${p.order.orderId} was declined yet Processed`);
  });

  return report;
}

/** Repeated calls with a key that had been applied, answered from the idempotency store instead of applied again. */
export function duplicatesPrevented(ledger: readonly LedgerEntry[]): number {
  return ledger.reduce((sum, e) => sum + (e.requests - 1), 0);
}

/**
 * The outages the services' breakers declared, from their alerts: ServiceUnavailable to its ServiceRecovered (to
 * now, when none came), as epoch ms.
 */
export function declaredOutages(alerts: readonly ObservedAlert[]): Array<{ from: number; to: number }> {
  const recovered = new Map(
    alerts.filter((a) => a.kind === "ServiceRecovered" && a.messageId).map((a) => [a.messageId!, a]),
  );
  return alerts
    .filter((a) => a.kind === "ServiceUnavailable" && a.messageId)
    .map((a) => {
      const end = recovered.get(a.messageId!.replace(/ServiceUnavailable$/, "ServiceRecovered"));
      return { from: Date.parse(a.at), to: end ? Date.parse(end.at) : Date.now() };
    });
}
