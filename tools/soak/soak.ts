/**
 * A soak run: many orders through the whole local stack with a seeded fault plan, optionally SIGKILLing the app
 * process and restarting it on the same data directory while orders are in flight; then every invariant checked
 * from outside (invariants.ts). The chaos test (test/chaos) and `npm run demo` are two sizes of this run.
 */
import fs from "node:fs";
import {
  ALERT_RESEND_AFTER_SECONDS,
  BREAKER,
  PROCESS_STATES,
  TERMINAL_STATES,
  type BreakerRecord,
  type ProcessState,
  type StateRecord,
} from "../../src/domain";
import { AppProcess } from "../appProcess";
import { FAST_TIMINGS } from "../fastTimings";
import { startLocalStack } from "../localStack";
import { seededRandom } from "../seededRandom";
import { SERVICES, type Fault, type LedgerEntry, type Service, type Simulator } from "../simulator";
import {
  SCENARIOS,
  SCENARIO_NAMES,
  planOrders,
  type FaultMix,
  type PlannedOrder,
  type Scenario,
} from "./faultPlan";
import {
  checkInvariants,
  deriveBound,
  duplicatesPrevented,
  type Bound,
  type InvariantReport,
  type KillWindow,
} from "./invariants";
import { holdOutage, killRepeatedly } from "./disruptions";
import { AlertCollector, StateReader } from "./observe";
import {
  OUTAGE_RECORD_MARGIN_MS,
  outageEvidence,
  serviceOutages,
  type OutageEvidence,
  type OutageWindow,
  type ServiceOutage,
} from "./outages";
import { submitAll, type Acceptance } from "./submitter";
import { formatTable } from "../table";

/**
 * The fast timings with a 4 s Supervisor back-off (4 s, then 8 s), closer to the shipped 10 s than the e2e tests'
 * 1 s, so that retries spread over the run as they do in production.
 */
export const SOAK_TIMINGS: Record<string, string> = { ...FAST_TIMINGS, SUPERVISOR_BACKOFF_SECONDS: "4" };

export interface SoakOptions {
  orders: number;
  seed: number;
  mix: FaultMix;
  /** orderIds are `${prefix}-<n>`; default `SOAK-<seed>`. */
  prefix?: string;
  /** Probability of an extra transient 503 on any remote call (seeded); default 0. */
  backgroundTransient?: number;
  /**
   * A downstream outage: `service` answers 503 to every call from `afterSeconds` into the run, for `seconds`. Its
   * breaker should open, park the orders that need it, and close once it is back.
   */
  outage?: { service: Service; afterSeconds: number; seconds: number };
  /** SIGKILLs of the app process while orders are in flight, each followed by a restart; default 0. */
  kills?: number;
  /** Seconds between kills, drawn uniformly from [min, max]; default [6, 14]. */
  killGapSeconds?: [number, number];
  /** Timing overrides on top of the shipped settings (local.settings.sample.json). */
  settings: Record<string, string>;
  /** The devhost CLI script (compiledDevhostCli(), or a transpiled copy) and the compiled app entry it loads. */
  cli: string;
  appEntry: string;
  /** The app's data directory (task hub, settings, app.log), reused across restarts. */
  dataDir: string;
  /** Submissions in flight at once (default 8) and the most per second (default unlimited). */
  concurrency?: number;
  perSecond?: number;
  /** How long to wait, after the last acceptance and the last kill, for every order to end; default 150 s. */
  settleTimeoutMs?: number;
  /** The whole run, from start to the last check, must end within this; default unlimited. */
  budgetMs?: number;
  /** Called about twice a second with the orders per state. */
  onProgress?: (progress: SoakProgress) => void;
  /** Narration: kills, restarts, phases. */
  log?: (line: string) => void;
}

export interface SoakProgress {
  elapsedMs: number;
  total: number;
  accepted: number;
  byState: Record<ProcessState, number>;
  kills: number;
  appUp: boolean;
}

export interface ScenarioOutcome {
  scenario: Scenario;
  orders: number;
  asPlanned: number;
  byState: Partial<Record<ProcessState, number>>;
}

export interface SoakResult {
  seed: number;
  orders: number;
  durationMs: number;
  byState: Record<ProcessState, number>;
  scenarios: ScenarioOutcome[];
  /** Orders that needed more than one attempt and still ended Processed or Compensated. */
  recoveredOrders: number;
  /** Attempts started by the Supervisor's retries, over all orders. */
  supervisorRetries: number;
  duplicatesPrevented: number;
  kills: KillWindow[];
  alerts: number;
  /** Alerts by kind, a service's alerts by kind and service ("ServiceUnavailable payment"). */
  alertKinds: Record<string, number>;
  bound: Bound;
  /** The order that took longest from first claim to terminal, against its bound. */
  slowest: { orderId: string; elapsed: number; allowed: number } | undefined;
  invariants: InvariantReport;
  /** The evidence the invariants were checked on. */
  records: StateRecord[];
  /** Each service's breaker record as the run left it. */
  breakers: BreakerRecord[];
  /** When the declared outage (options.outage) began and ended, in ISO time; undefined without one. */
  outageWindow: OutageWindow | undefined;
  /** The calls the declared outage failed, and whether they had to open its service's breaker. */
  outageEvidence: OutageEvidence | undefined;
  /** Each outage a service's breaker alerted, with when it was alerted open and closed (ISO, from the alerts). */
  serviceOutages: ServiceOutage[];
  ledger: LedgerEntry[];
  appLog: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function countByState(states: Iterable<ProcessState>): Record<ProcessState, number> {
  const counts = Object.fromEntries(PROCESS_STATES.map((s) => [s, 0])) as Record<ProcessState, number>;
  for (const state of states) counts[state]++;
  return counts;
}

/** Per scenario of the plan: its orders, how many ended as planned, and where they all ended. */
function scenarioTally(
  plan: readonly PlannedOrder[],
  records: readonly StateRecord[],
): SoakResult["scenarios"] {
  const stateOf = new Map(records.map((r) => [r.orderId, r.processState]));
  return SCENARIO_NAMES.map((scenario) => {
    const orders = plan.filter((p) => p.scenario === scenario);
    const byState: Partial<Record<ProcessState, number>> = {};
    for (const p of orders) {
      const state = stateOf.get(p.order.orderId);
      if (state) byState[state] = (byState[state] ?? 0) + 1;
    }
    return {
      scenario,
      orders: orders.length,
      asPlanned: orders.filter((p) => stateOf.get(p.order.orderId) === p.expected).length,
      byState,
    };
  }).filter((s) => s.orders > 0);
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const random = seededRandom(options.seed);
  const settingsOverrides = options.settings;
  const bound = deriveBound({ ...settingsOverrides });
  const plan = planOrders({
    count: options.orders,
    prefix: options.prefix ?? `SOAK-${options.seed}`,
    random,
    mix: options.mix,
    stepTimeoutSeconds: Number(settingsOverrides.STEP_TIMEOUT_SECONDS),
    agentMaxAttempts: Number(settingsOverrides.AGENT_MAX_ATTEMPTS ?? 3),
  });

  const stack = await startLocalStack({ random: seededRandom(options.seed ^ 0x5eed) });
  const reader = new StateReader(stack.cosmos);
  const alerts = new AlertCollector(stack.emulators.serviceBusConnectionString);
  const app = new AppProcess({
    cli: options.cli,
    appEntry: options.appEntry,
    dataDir: options.dataDir,
    settings: stack.appSettings(settingsOverrides),
  });
  const kills: KillWindow[] = [];
  const accepted: Acceptance[] = [];
  let progressTimer: NodeJS.Timeout | undefined;
  try {
    for (const planned of plan) for (const fault of planned.faults) stack.simulator.injectFault(fault);
    if (options.backgroundTransient) {
      for (const service of SERVICES)
        stack.simulator.injectFault({ service, kind: "transient", probability: options.backgroundTransient });
    }
    log(`app starting (log: ${app.logFile})`);
    await app.start();

    let latest = countByState([]);
    const allDone = () =>
      accepted.length === plan.length &&
      TERMINAL_STATES.reduce((sum, s) => sum + latest[s], 0) === plan.length;
    const poll = async () => {
      latest = countByState((await reader.states()).values());
      options.onProgress?.({
        elapsedMs: Date.now() - started,
        total: plan.length,
        accepted: accepted.length,
        byState: latest,
        kills: kills.length,
        appUp: app.running,
      });
    };
    const progress = async () => {
      await poll().catch(() => undefined);
      progressTimer = setTimeout(() => void progress(), 500);
    };
    void progress();

    const submitting = submitAll(
      { url: () => (app.running ? app.url : undefined) },
      plan.map((p) => p.order),
      {
        concurrency: options.concurrency ?? 8,
        ...(options.perSecond ? { perSecond: options.perSecond } : {}),
        onAccepted: (a) => accepted.push(a),
      },
    );

    // The declared outage's fault while it lasts, which the kills keep clear of.
    let outageFault: Fault | undefined;
    const killing = killRepeatedly({
      app,
      count: options.kills ?? 0,
      gapSeconds: options.killGapSeconds ?? [6, 14],
      random,
      busy: () => latest.Processing + latest.Compensating > 0,
      done: allDone,
      outageFault: () => outageFault,
      kills,
      started,
      log,
    });
    const outage = options.outage
      ? holdOutage(stack.simulator, options.outage, started, (fault) => (outageFault = fault), log)
      : Promise.resolve(undefined);

    const [, , heldOutage] = await Promise.all([submitting, killing, outage]);
    log(
      `all ${accepted.length} orders accepted; ${kills.length} kill(s) done; waiting for every order to end`,
    );
    const settleDeadline = Math.min(
      Date.now() + (options.settleTimeoutMs ?? 150_000),
      started + (options.budgetMs ?? Infinity) - 15_000, // room to stop the app and check
    );
    for (;;) {
      await poll();
      if (allDone() || Date.now() > settleDeadline) break;
      await sleep(500);
    }
    // An alert is sent just after the state write that decides it, or, when a kill fell in between, by the
    // Supervisor once it has been unsent for ALERT_RESEND_AFTER_SECONDS: give the last ones that long to land.
    const alertDeadline = Math.min(
      Date.now() + (ALERT_RESEND_AFTER_SECONDS + 10) * 1000,
      started + (options.budgetMs ?? Infinity) - 12_000,
    );
    await waitForOwedAlerts(reader, alerts, alertDeadline);
    clearTimeout(progressTimer);
    progressTimer = undefined;
    await poll().catch(() => undefined);
    // The evidence is read with the app stopped, so that records, ledger and alerts are one picture.
    log("stopping the app");
    await app.stop(10_000);
    await sleep(1_000);

    const records = await reader.all();
    const breakers = await reader.breakers();
    const { ledger, stock } = await settledLedgerAndStock(stack.simulator, plan);
    const invariants = checkInvariants({
      planned: plan,
      accepted,
      records,
      ledger,
      alerts: alerts.alerts,
      kills,
      bound,
      stock,
      defaultStock: 1000,
    });

    const scenarios = scenarioTally(plan, records);
    const slowest = [...invariants.timings].sort((a, b) => b.elapsed - a.elapsed)[0];
    return {
      seed: options.seed,
      orders: plan.length,
      durationMs: Date.now() - started,
      byState: countByState(records.map((r) => r.processState)),
      scenarios,
      recoveredOrders: records.filter(
        (r) => r.attempt > 1 && (r.processState === "Processed" || r.processState === "Compensated"),
      ).length,
      supervisorRetries: records.reduce((sum, r) => sum + Math.max(0, r.attempt - 1), 0),
      duplicatesPrevented: duplicatesPrevented(ledger),
      kills,
      alerts: alerts.alerts.length,
      alertKinds: alerts.alerts.reduce<Record<string, number>>((kinds, a) => {
        const key = a.service ? `${a.kind} ${a.service}` : a.kind;
        kinds[key] = (kinds[key] ?? 0) + 1;
        return kinds;
      }, {}),
      bound,
      slowest,
      invariants,
      records,
      breakers,
      outageWindow: heldOutage?.window,
      outageEvidence: heldOutage
        ? outageEvidence(heldOutage.hits, Date.parse(heldOutage.window.to), kills)
        : undefined,
      serviceOutages: serviceOutages(alerts.alerts),
      ledger,
      appLog: app.logFile,
    };
  } finally {
    if (progressTimer) clearTimeout(progressTimer);
    await app.stop();
    await alerts.close().catch(() => undefined);
    reader.close();
    await stack.stop();
  }
}

/** Waits until every Error and CompensationFailed record's alert has been sent and observed, or the deadline. */
async function waitForOwedAlerts(
  reader: StateReader,
  alerts: AlertCollector,
  deadline: number,
): Promise<void> {
  for (;;) {
    const records = await reader.all();
    const owed = records.filter(
      (r) =>
        (r.processState === "Error" || r.processState === "CompensationFailed") &&
        (r.alert?.sentAt == null ||
          !alerts.alerts.some((a) => a.orderId === r.orderId && a.kind === r.processState)),
    );
    if (owed.length === 0 || Date.now() > deadline) return;
    await sleep(250);
  }
}

/**
 * The ledger and the stock of every sku the plan uses, read as one consistent picture. A call held by a latency
 * fault may still land after its order has ended (that is the "slower than the deadline" case), so the two are
 * read until no new ledger entry appears in between.
 */
async function settledLedgerAndStock(
  simulator: Simulator,
  plan: readonly PlannedOrder[],
): Promise<{ ledger: LedgerEntry[]; stock: Map<string, number> }> {
  const skus = [...new Set(plan.flatMap((p) => p.order.items.map((i) => i.sku)))].sort();
  const fingerprint = (entries: LedgerEntry[]) =>
    entries.map((e) => `${e.idempotencyKey}:${e.applied}`).join();
  for (let round = 0; ; round++) {
    const before = simulator.ledger();
    const stock = new Map<string, number>();
    for (const sku of skus) {
      const res = await fetch(`${simulator.url}/inventory/stock/${encodeURIComponent(sku)}`);
      stock.set(sku, ((await res.json()) as { available: number }).available);
    }
    const after = simulator.ledger();
    if (fingerprint(before) === fingerprint(after) || round >= 20) return { ledger: after, stock };
    await sleep(500);
  }
}

/**
 * Why orders ended where an operator must act, by the error code their last failure names: an injected fault, an
 * open circuit breaker, a refusal, or attempts that timed out without any answer.
 */
function failureCauses(records: readonly StateRecord[]): string {
  const causes = new Map<string, number>();
  for (const r of records) {
    if (r.processState !== "Error" && r.processState !== "CompensationFailed") continue;
    const message = r.lastError?.message ?? "";
    const cause =
      /last error (\w+)/.exec(message)?.[1] ??
      (r.lastError?.code === "RetriesExhausted" ? "timed out" : (r.lastError?.code ?? "unknown"));
    causes.set(cause, (causes.get(cause) ?? 0) + 1);
  }
  return [...causes]
    .sort((a, b) => b[1] - a[1])
    .map(([cause, n]) => `${cause} ${n}`)
    .join(", ");
}

/** A breaker as the summary shows it: its state, its outages, and the failed probes of an open one. */
function describeBreaker(b: BreakerRecord): string {
  const open =
    b.state === "closed"
      ? ""
      : ` until ${b.state === "open" ? b.retryAt : b.probe?.until}, ${b.failedProbes} failed probes + ` +
        `${b.suspectProbes} by suspects`;
  return `${b.service} ${b.state}${open} (${b.outages} outage${b.outages === 1 ? "" : "s"})`;
}

function describeOutageEvidence(e: OutageEvidence): string {
  const rule = `${BREAKER.failureThreshold} from ${BREAKER.distinctOrders} orders`;
  return (
    `Declared outage: failed ${e.calls} calls from ${e.orders} orders; ${e.recorded.calls} from ` +
    `${e.recorded.orders} orders answered ${OUTAGE_RECORD_MARGIN_MS / 1000} s before a kill or its end, ` +
    (e.opensBreaker
      ? `which meets the breaker's rule (${rule}): its breaker must open`
      : `short of the breaker's rule (${rule}): whether its breaker opened is not checked`)
  );
}

function describeOutage(o: ServiceOutage): string {
  return `${o.service} #${o.outage} opened ${o.openedAt ?? "(no alert)"}, recovered ${o.recoveredAt ?? "(not yet)"}`;
}

/**
 * For each order the run left unfinished, the last lines of the app's log that name it (across restarts): what
 * a failed run in CI must show, since its data directory is gone afterwards.
 */
export function unfinishedOrderLog(result: SoakResult, linesPerOrder = 12): string {
  const unfinished = result.records.filter((r) => !TERMINAL_STATES.includes(r.processState));
  if (unfinished.length === 0) return "";
  let log: string[];
  try {
    log = fs.readFileSync(result.appLog, "utf8").split("\n");
  } catch (error) {
    return `(no app log to show: ${String(error)})`;
  }
  return unfinished
    .slice(0, 5)
    .map((r) => {
      // The id not followed by a digit, so that ORDER-1 does not pick up ORDER-12's lines.
      const escaped = r.orderId.replace(/[^A-Za-z0-9]/g, (ch) => `\\${ch}`);
      const mentions = new RegExp(`${escaped}(?![0-9])`);
      const lines = log.filter((line) => mentions.test(line)).slice(-linesPerOrder);
      return [`App log of ${r.orderId} (last ${lines.length} lines):`, ...lines.map((l) => `  ${l}`)].join(
        "\n",
      );
    })
    .join("\n");
}

/** The run's summary: orders per terminal state, recoveries, duplicates prevented, kills, and each invariant. */
export function formatSoakSummary(result: SoakResult, title = "Soak run"): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const downtime = result.kills.map((k) => k.readyAt - k.killedAt);
  const lines = [
    `${title}: ${result.orders} orders, seed ${result.seed}, ${seconds(result.durationMs)}`,
    "",
    formatTable(
      ["outcome", "orders"],
      [
        ...PROCESS_STATES.filter((s) => TERMINAL_STATES.includes(s) || result.byState[s] > 0).map(
          (s) => [s, result.byState[s]] as [string, number],
        ),
        ["recovered (needed a Supervisor retry, still finished)", result.recoveredOrders],
        ["Supervisor retries (attempts after the first)", result.supervisorRetries],
        [
          "duplicates prevented (repeat calls answered from the idempotency store)",
          result.duplicatesPrevented,
        ],
        ["app kills survived (SIGKILL + restart)", result.kills.length],
        [
          `alerts raised (${Object.entries(result.alertKinds)
            .map(([kind, n]) => `${kind} ${n}`)
            .join(", ")})`,
          result.alerts,
        ],
      ],
    ),
    "",
    formatTable(
      ["scenario", "orders", "Processed", "Compensated", "Error", "CompensationFailed", "as planned"],
      result.scenarios.map((s) => [
        SCENARIOS[s.scenario],
        s.orders,
        s.byState.Processed ?? 0,
        s.byState.Compensated ?? 0,
        s.byState.Error ?? 0,
        s.byState.CompensationFailed ?? 0,
        s.asPlanned,
      ]),
    ),
    "",
    `Bound per order: ${result.bound.explanation}`,
    result.slowest
      ? `Slowest order: ${result.slowest.orderId}, ${result.slowest.elapsed.toFixed(1)} s from first claim to terminal (allowed ${result.slowest.allowed.toFixed(1)} s)`
      : "Slowest order: none finished",
    `Causes of Error and CompensationFailed: ${failureCauses(result.records) || "none"}`,
    `Breakers at the end: ${result.breakers.map(describeBreaker).join("; ") || "none was written"}`,
    `Outages alerted: ${result.serviceOutages.map(describeOutage).join("; ") || "none"}` +
      (result.outageWindow
        ? ` (declared: ${result.outageWindow.service} ${result.outageWindow.from} to ${result.outageWindow.to})`
        : ""),
    ...(result.outageEvidence ? [describeOutageEvidence(result.outageEvidence)] : []),
    downtime.length > 0
      ? `Kills: ${downtime.length}, app back after ${downtime.map((ms) => (ms / 1000).toFixed(1)).join(", ")} s`
      : "Kills: none",
    "",
    "Invariants:",
    ...result.invariants.checked.map(
      (c) =>
        `  ${c.violations === 0 ? "ok  " : "FAIL"} ${c.invariant} (${c.checked} checked${c.violations ? `, ${c.violations} violated` : ""})`,
    ),
    ...result.invariants.violations.slice(0, 30).map((v) => `  - ${v}`),
    ...(result.invariants.violations.length > 30
      ? [`  ... and ${result.invariants.violations.length - 30} more`]
      : []),
  ];
  return lines.join("\n");
}
