import { metrics, type Counter, type Histogram, type MeterProvider } from "@opentelemetry/api";
import { isTerminal, PROCESS_STATES, type ProcessState, type StateRecord } from "../domain";
import { TRACER_NAME } from "./tracing";

/**
 * The app's metrics, under `sas.` (docs/operations.md#metrics). They go where telemetry.ts sends them (Application
 * Insights' customMetrics in Azure); with no meter provider each call is the API's no-op.
 */
export const METRICS = {
  transitions: "sas.order.transitions",
  ordersPerState: "sas.orders",
  timeToTerminal: "sas.order.time_to_terminal",
  recoveries: "sas.supervisor.recoveries",
  alerts: "sas.alerts",
} as const;

/** Seconds from submission to a terminal state: a clean order takes about a second, a recovered one minutes. */
const TERMINAL_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400];

interface Instruments {
  transitions: Counter;
  timeToTerminal: Histogram;
  recoveries: Counter;
  alerts: Counter;
}

// A meter made before the provider is registered stays a no-op for good (the metrics API has no proxy), so the
// instruments are made on first use and again whenever the provider changes.
let made: { provider: MeterProvider; instruments: Instruments } | undefined;

function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (made?.provider === provider) return made.instruments;
  const meter = provider.getMeter(TRACER_NAME);
  const instruments: Instruments = {
    transitions: meter.createCounter(METRICS.transitions, {
      description:
        "State writes that changed an order's processState, by from and to (from is none for a new order)",
      unit: "{transition}",
    }),
    timeToTerminal: meter.createHistogram(METRICS.timeToTerminal, {
      description:
        "Seconds from an order's submission to the terminal state it reached, by state and workflow",
      unit: "s",
      advice: { explicitBucketBoundaries: TERMINAL_BUCKETS },
    }),
    recoveries: meter.createCounter(METRICS.recoveries, {
      description: "The Supervisor's decisions on expired attempts, by action and by what found them",
      unit: "{decision}",
    }),
    alerts: meter.createCounter(METRICS.alerts, {
      description: "Operator alerts sent to the alerts queue, by kind",
      unit: "{alert}",
    }),
  };
  made = { provider, instruments };
  return instruments;
}

/** A state write that landed (`before` null: the record was created): the transition and, at the end, the time. */
export function recordStateWrite(before: StateRecord | null, after: StateRecord): void {
  if (before?.processState === after.processState) return;
  const { transitions, timeToTerminal } = instruments();
  transitions.add(1, { from: before?.processState ?? "none", to: after.processState });
  if (isTerminal(after.processState)) {
    const seconds = (Date.parse(after.updatedAt) - Date.parse(after.createdAt)) / 1000;
    timeToTerminal.record(Math.max(0, seconds), {
      state: after.processState,
      workflow: `${after.workflow.name}:v${after.workflow.version}`,
    });
  }
}

/** What the Supervisor did with an expired attempt, named by the state it wrote. */
export const RECOVERY_ACTIONS: Partial<Record<ProcessState, string>> = {
  Pending: "retry",
  CompensationPending: "retryCompensation",
  Error: "gaveUp",
  CompensationFailed: "gaveUpCompensation",
};

export function recordRecovery(state: ProcessState, trigger: "deadline" | "sweep"): void {
  instruments().recoveries.add(1, { action: RECOVERY_ACTIONS[state] ?? state, trigger });
}

export function recordAlert(kind: string): void {
  instruments().alerts.add(1, { kind });
}

/**
 * `sas.orders`: the orders in each processState, as a gauge read at each export from `count`, which answers
 * undefined where this instance should not count (only the Supervisor's leader does, so that the whole app counts
 * once per export, not once per instance). Registered once per process and meter provider.
 */
let observed: MeterProvider | undefined;
export function observeOrdersPerState(count: () => Promise<Record<ProcessState, number>> | undefined): void {
  const provider = metrics.getMeterProvider();
  if (observed === provider) return;
  observed = provider;
  const gauge = provider.getMeter(TRACER_NAME).createObservableGauge(METRICS.ordersPerState, {
    description: "Orders in each processState (counted by the instance holding the Supervisor's lease)",
    unit: "{order}",
  });
  gauge.addCallback(async (result) => {
    const counts = await count();
    if (!counts) return;
    for (const state of PROCESS_STATES) result.observe(counts[state], { state });
  });
}

/** Until when this instance holds the Supervisor's lease, as its last sweep found (null: it does not). */
let leaderUntil: number | null = null;

export function noteSupervisorLease(expiresAt: string | null): void {
  leaderUntil = expiresAt === null ? null : Date.parse(expiresAt);
}

export function holdsSupervisorLease(now: number): boolean {
  return leaderUntil !== null && now < leaderUntil;
}
