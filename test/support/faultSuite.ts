/**
 * The fault-injection suite's harness (test/faults): a burst of orders, some through the front door and some
 * straight onto `orders`, submitted before and during a fault of the app's own store or bus (the proxies of
 * faultProxy.ts), then checked from outside the app as the chaos soak checks its runs: the state records read
 * straight from the Cosmos DB stand-in, the simulator's ledger and stock, the `alerts` queue drained by a client
 * of its own, and the dead-letter queues peeked on the emulator. The invariants are the soak's
 * (tools/soak/invariants.ts); what this adds is what only a fault of the app's own infrastructure can break: the
 * front door's answers (202, or 503 with Retry-After; never a 500, never a hang), and messages the app must not set
 * aside.
 */
import { ServiceBusClient } from "@azure/service-bus";
import { expect } from "vitest";
import { EMULATOR_KEY } from "devhost/emulators";
import {
  AGENT_NAMES,
  agentRequestQueue,
  INFRA_FAULTS,
  TERMINAL_STATES,
  type StateRecord,
} from "../../src/domain";
import type { LocalStackAddresses } from "../../tools/localStack";
import { sampleSettings } from "../../tools/repository";
import { sampleOrder } from "../../tools/sampleOrders";
import { OPERATIONS, type FaultSpec, type LedgerEntry } from "../../tools/simulator";
import type { PlannedOrder, Scenario } from "../../tools/soak/faultPlan";
import {
  checkInvariants,
  deriveBound,
  type InvariantReport,
  type KillWindow,
} from "../../tools/soak/invariants";
import { AlertCollector, StateReader } from "../../tools/soak/observe";
import type { Acceptance } from "../../tools/soak/submitter";
import { seededRandom } from "../../tools/seededRandom";
import { E2E_SETTINGS } from "./e2e";
import { pollUntil } from "./wait";

/** What the suite needs of a running stack: the emulators' own addresses, and the app's front door now. */
export interface FaultTarget {
  /** The emulators and the simulator themselves (never the proxies): the truth during a fault. */
  emulators: LocalStackAddresses;
  /** The app's base URL now; undefined while it is down (killed, restarting). */
  appUrl(): string | undefined;
  /** The app's settings on top of the shipped ones (E2E_SETTINGS and the file's own), for the bound. */
  settings?: Record<string, string>;
}

/** How an order is submitted: POST /api/orders (retried on a 503) or a message sent straight onto `orders`. */
export type Channel = "api" | "queue";

/** What a planned order meets at the remote services, scoped to it in the simulator. */
export type OrderKind = Extract<Scenario, "none" | "declined" | "undoRefused">;

/** One answer of the front door, as the suite's client saw it. */
export interface FrontDoorAnswer {
  orderId: string;
  /** The HTTP status; 0 when no answer came (the connection failed, or the client gave up: `hang`). */
  status: number;
  /** Milliseconds from the request to its answer (or failure). */
  ms: number;
  retryAfter: string | null;
  /** No answer within HANG_MS: the front door held the request. */
  hang: boolean;
  /** The connection failed (the app down or killed): not an answer, and the client sends again. */
  connectionError?: string;
}

/** Longer than this without an answer is a hang; the requirement is "seconds, not minutes" (about 30 s). */
export const HANG_MS = 30_000;
/**
 * How long the suite's client waits after a 503 before sending again: the Retry-After it is given (the app says
 * 10 s), capped so that the run stays short. A real client waits the whole Retry-After.
 */
const RESUBMIT_CAP_MS = 2_000;

/**
 * The queues whose messages the app puts back on a fault of its store or bus rather than abandon: nothing of ours may
 * reach their dead-letter subqueue or rejected-messages. (An agent request that keeps failing is dead-lettered by
 * design: its step times out and the Supervisor retries it; those are reported, not asserted.)
 */
const GUARDED_QUEUES: readonly string[] = ["orders", "agent-replies", "deadlines"];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface FaultScenarioReport {
  invariants: InvariantReport;
  /** Violations of the suite's own checks (front door, dead letters, set-aside orders), one line each. */
  violations: string[];
  /** Final records of this scenario's orders. */
  records: StateRecord[];
  /** orderId → failureCount, for the orders whose count is above 0. */
  failureCounts: Record<string, number>;
  /** processState → how many of this scenario's orders ended there. */
  states: Record<string, number>;
  /** Messages on each dead-letter queue the suite reads (agent request queues are reported, not asserted). */
  deadLetters: Record<string, number>;
  frontDoor: { answers: number; byStatus: Record<string, number>; slowestMs: number };
}

/**
 * One file's fault runs against one stack. Every order it plans is kept for the whole file: the invariants read
 * the ledger and the stock of every order the stack has seen.
 */
export class FaultRun {
  readonly alerts: AlertCollector;
  private readonly reader: StateReader;
  private readonly bus: ServiceBusClient;
  private readonly planned: PlannedOrder[] = [];
  private readonly accepted: Acceptance[] = [];
  private readonly answers: FrontDoorAnswer[] = [];
  /** Windows during which the app's store or bus was broken, or the app was down. */
  private readonly windows: KillWindow[] = [];
  /** Submissions started by `submitInBackground`, not yet waited for. */
  private readonly pending: Array<Promise<void>> = [];
  private counter = 0;

  constructor(private readonly target: FaultTarget) {
    this.alerts = new AlertCollector(target.emulators.serviceBusConnectionString);
    this.reader = new StateReader({
      endpoint: target.emulators.cosmosEndpoint,
      key: EMULATOR_KEY,
      database: sampleSettings().COSMOS_DATABASE ?? "sas",
    });
    this.bus = new ServiceBusClient(target.emulators.serviceBusConnectionString);
  }

  /** The simulator, straight. */
  private get sim(): string {
    return this.target.emulators.simulatorUrl;
  }

  /**
   * Plans orders `kinds` (each a fresh orderId under `prefix`) and arms their simulator faults: "declined" goes
   * over the payment limit (Compensated: reservation released), "undoRefused" is declined and its release is
   * refused for good (CompensationFailed, one alert).
   */
  async plan(prefix: string, kinds: readonly OrderKind[]): Promise<PlannedOrder[]> {
    const random = seededRandom(kinds.length * 7919 + prefix.length);
    const plans: PlannedOrder[] = [];
    for (const kind of kinds) {
      const i = ++this.counter;
      const declined = kind !== "none";
      const order = sampleOrder(i, {
        prefix: `${prefix}-${process.pid}`,
        random,
        declined: declined ? 1 : 0,
      });
      const faults: FaultSpec[] =
        kind === "undoRefused"
          ? [
              {
                service: "inventory",
                operation: OPERATIONS.inventory.undo,
                orderId: order.orderId,
                kind: "permanent",
                count: 1,
              } as FaultSpec,
            ]
          : [];
      for (const fault of faults) {
        const res = await fetch(`${this.sim}/_faults`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(fault),
        });
        if (!res.ok) throw new Error(`arming ${JSON.stringify(fault)}: ${res.status} ${await res.text()}`);
      }
      const expected =
        kind === "none" ? "Processed" : kind === "declined" ? "Compensated" : "CompensationFailed";
      plans.push({ order, scenario: kind, faults, expected, declined });
    }
    this.planned.push(...plans);
    return plans;
  }

  /**
   * Submits each order by its channel, all at once, and resolves when every one is accepted: a message sent to
   * `orders` is accepted when the send completes; a POST when the front door answers 202. A 503 (with its
   * Retry-After) or a failed connection is sent again, as a client should; every answer is kept for `check`.
   */
  async submit(orders: readonly PlannedOrder[], channel: (index: number) => Channel): Promise<void> {
    await Promise.all(
      orders.map((p, index) =>
        channel(index) === "queue" ? this.sendToOrders(p) : this.postUntilAccepted(p),
      ),
    );
  }

  /** Starts submitting now and returns at once; `settle` waits for it (and fails with it). */
  submitInBackground(orders: readonly PlannedOrder[], channel: (index: number) => Channel): void {
    const submitting = this.submit(orders, channel);
    // Handled here so that a failure waits for `settle` to report it, not for the process's rejection handler.
    submitting.catch(() => undefined);
    this.pending.push(submitting);
  }

  private async sendToOrders(p: PlannedOrder): Promise<void> {
    const submittedAt = Date.now();
    const sender = this.bus.createSender("orders");
    try {
      await sender.sendMessages({
        body: p.order,
        messageId: `direct:${p.order.orderId}`,
        contentType: "application/json",
      });
    } finally {
      await sender.close();
    }
    this.accepted.push({ orderId: p.order.orderId, submittedAt, acceptedAt: Date.now(), requests: 1 });
  }

  private async postUntilAccepted(p: PlannedOrder, timeoutMs = 150_000): Promise<void> {
    const { orderId } = p.order;
    const submittedAt = Date.now();
    let requests = 0;
    for (;;) {
      if (Date.now() - submittedAt > timeoutMs)
        throw new Error(`${orderId}: not accepted through the front door within ${timeoutMs} ms`);
      const url = this.target.appUrl();
      if (!url) {
        await sleep(100);
        continue;
      }
      requests++;
      const started = Date.now();
      let answer: FrontDoorAnswer;
      try {
        const res = await fetch(`${url}/api/orders`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(p.order),
          // Past the bound by a margin, so that a hang is seen as one rather than waited out.
          signal: AbortSignal.timeout(HANG_MS + 5_000),
        });
        await res.text();
        answer = {
          orderId,
          status: res.status,
          ms: Date.now() - started,
          retryAfter: res.headers.get("retry-after"),
          hang: false,
        };
      } catch (error) {
        const hang = (error as Error).name === "TimeoutError";
        answer = {
          orderId,
          status: 0,
          ms: Date.now() - started,
          retryAfter: null,
          hang,
          ...(hang ? {} : { connectionError: String((error as Error).cause ?? error) }),
        };
      }
      this.answers.push(answer);
      if (answer.status === 202) {
        this.accepted.push({ orderId, submittedAt, acceptedAt: Date.now(), requests });
        return;
      }
      if (answer.status === 503 || answer.status === 0) {
        const asked = Number(answer.retryAfter ?? "0") * 1000;
        await sleep(Math.min(RESUBMIT_CAP_MS, Math.max(200, asked)));
        continue;
      }
      // Anything else is a finding: kept for `check`, and this order is not sent again.
      return;
    }
  }

  /** Records a window during which the app's store or bus was broken, or the app down (the bound allows for it). */
  faultWindow(from: number, to: number): void {
    this.windows.push({ killedAt: from, readyAt: to });
  }

  /**
   * Waits until the app's own record of its store and bus failing says the last episode is over: no fault for
   * INFRA_FAULTS.episodeGapSeconds. The app takes faults less than that apart for one outage, so two scenarios run
   * back to back on one app can make an episode long enough to raise the InfrastructureUnavailable alert that
   * neither would raise alone. A scenario that must stand alone calls this first.
   */
  async afterInfraEpisode(timeoutMs = 120_000): Promise<void> {
    const gapMs = INFRA_FAULTS.episodeGapSeconds * 1000;
    const until = Date.now() + timeoutMs;
    for (;;) {
      const record = await this.reader.infraFaults();
      const last = Math.max(
        ...[record?.store?.lastAt, record?.bus?.lastAt].map((at) => (at ? Date.parse(at) : 0)),
      );
      // The app writes what it saw up to INFRA_FLUSH_MS later: a little more than that on top of the gap.
      const wait = last + gapMs + 3_000 - Date.now();
      if (wait <= 0) return;
      if (Date.now() + wait > until)
        throw new Error(`the app's infrastructure fault episode has not ended within ${timeoutMs / 1000} s`);
      await sleep(wait);
    }
  }

  /**
   * Waits until every submission has been answered and every accepted order of `orders` has a state record in a
   * terminal state, for at most `timeoutMs`; fails naming the orders that have not.
   */
  async settle(orders: readonly PlannedOrder[], timeoutMs: number): Promise<void> {
    const started = Date.now();
    await Promise.all(this.pending.splice(0));
    const ids = new Set(orders.map((p) => p.order.orderId));
    const remaining = Math.max(5_000, timeoutMs - (Date.now() - started));
    await pollUntil(
      () => this.reader.states(),
      (states) =>
        this.accepted
          .filter((a) => ids.has(a.orderId))
          .every((a) => TERMINAL_STATES.includes(states.get(a.orderId) ?? "Pending")),
      (states) =>
        `not terminal within ${timeoutMs} ms: ` +
        this.accepted
          .filter((a) => ids.has(a.orderId) && !TERMINAL_STATES.includes(states.get(a.orderId) ?? "Pending"))
          .map((a) => `${a.orderId} ${states.get(a.orderId) ?? "(no state record)"}`)
          .join(", "),
      { timeoutMs: remaining, intervalMs: 500 },
    );
  }

  /**
   * Checks the file's orders so far against the soak's invariants and the suite's own, and reports on the orders of
   * `orders` (this scenario). Waits (bounded) for the alert of every order that ended in Error or CompensationFailed
   * first: the alert is sent just after the terminal write.
   */
  async check(orders: readonly PlannedOrder[]): Promise<FaultScenarioReport> {
    const ids = new Set(this.planned.map((p) => p.order.orderId));
    const ours = (records: StateRecord[]) => records.filter((r) => ids.has(r.orderId));
    const needAlerts = (records: StateRecord[]) =>
      records.filter(
        (r) =>
          (r.processState === "Error" || r.processState === "CompensationFailed") &&
          !this.alerts.alerts.some((a) => a.orderId === r.orderId && a.kind === r.processState),
      );
    const records = await pollUntil(
      async () => ours(await this.reader.all()),
      (all) => needAlerts(all).length === 0,
      (all) =>
        `no alert within 20 s for ${needAlerts(all)
          .map((r) => `${r.orderId} (${r.processState})`)
          .join(", ")}`,
      { timeoutMs: 20_000, intervalMs: 250 },
    ).catch(async () => ours(await this.reader.all()));
    const { ledger, stock } = await this.settledLedgerAndStock();

    const settings = { ...sampleSettings(), ...E2E_SETTINGS, ...this.target.settings };
    const invariants = checkInvariants({
      planned: this.planned,
      accepted: this.accepted,
      records,
      ledger,
      alerts: this.alerts.alerts,
      kills: this.windows,
      bound: deriveBound(settings),
      stock,
      defaultStock: 1000,
    });

    const violations: string[] = [];
    for (const a of this.answers) {
      if (a.hang) violations.push(`front door: ${a.orderId} had no answer within ${HANG_MS} ms`);
      else if (a.status === 0)
        continue; // the app was down: the client sends again
      else if (a.ms > HANG_MS)
        violations.push(`front door: ${a.orderId} answered ${a.status} after ${a.ms} ms`);
      if (a.status === 503 && !a.retryAfter)
        violations.push(`front door: ${a.orderId} answered 503 without Retry-After`);
      if (a.status !== 0 && a.status !== 202 && a.status !== 503)
        violations.push(`front door: ${a.orderId} answered ${a.status}`);
    }
    for (const p of this.planned) {
      const answered = this.accepted.some((a) => a.orderId === p.order.orderId);
      if (!answered && this.answers.some((a) => a.orderId === p.order.orderId))
        violations.push(`front door: ${p.order.orderId} was never accepted`);
    }

    const deadLetters: Record<string, number> = {};
    for (const queue of [...GUARDED_QUEUES, ...AGENT_NAMES.map(agentRequestQueue)]) {
      const messages = await this.peek(queue, true);
      deadLetters[queue] = messages.length;
      if (GUARDED_QUEUES.includes(queue) && messages.length > 0)
        violations.push(
          `${queue}: ${messages.length} message(s) dead-lettered: ${messages
            .map((m) => `${String(m.messageId)} (${m.deadLetterReason ?? "?"})`)
            .join(", ")}`,
        );
    }
    const setAside = (await this.peek("rejected-messages", false)).filter((m) =>
      GUARDED_QUEUES.includes(String(m.applicationProperties?.rejectedFrom)),
    );
    for (const m of setAside)
      violations.push(
        `rejected-messages: a message of ${String(m.applicationProperties?.rejectedFrom)} was set aside: ${String(
          m.applicationProperties?.originalMessageId,
        )}`,
      );

    const scenario = new Set(orders.map((p) => p.order.orderId));
    const mine = records.filter((r) => scenario.has(r.orderId));
    const states: Record<string, number> = {};
    const failureCounts: Record<string, number> = {};
    for (const r of mine) {
      states[r.processState] = (states[r.processState] ?? 0) + 1;
      if (r.failureCount > 0 || r.compensationFailureCount > 0)
        failureCounts[r.orderId] = r.failureCount + r.compensationFailureCount;
    }
    const answers = this.answers.filter((a) => scenario.has(a.orderId));
    const byStatus: Record<string, number> = {};
    for (const a of answers) {
      const key = a.hang ? "hang" : a.status === 0 ? "no connection" : String(a.status);
      byStatus[key] = (byStatus[key] ?? 0) + 1;
    }
    return {
      invariants,
      violations,
      records: mine,
      failureCounts,
      states,
      deadLetters,
      frontDoor: { answers: answers.length, byStatus, slowestMs: Math.max(0, ...answers.map((a) => a.ms)) },
    };
  }

  /**
   * What every scenario asserts once its fault is over: `orders` end (within `timeoutMs`), the soak's invariants and
   * this suite's checks hold, and each order ended as planned. The report is printed and returned for the
   * scenario's own checks.
   */
  async expectEndedAsPlanned(
    name: string,
    orders: readonly PlannedOrder[],
    timeoutMs: number,
  ): Promise<FaultScenarioReport> {
    await this.settle(orders, timeoutMs);
    const report = await this.check(orders);
    console.log(describeReport(name, report));
    expect(report.invariants.violations).toEqual([]);
    expect(report.violations).toEqual([]);
    expect(this.unexpected(orders, report)).toEqual([]);
    return report;
  }

  /** The orders whose final state differs from the planned one (an infrastructure fault spent their failures). */
  unexpected(orders: readonly PlannedOrder[], report: FaultScenarioReport): string[] {
    const byId = new Map(report.records.map((r) => [r.orderId, r]));
    return orders
      .filter((p) => byId.get(p.order.orderId)?.processState !== p.expected)
      .map((p) => {
        const r = byId.get(p.order.orderId);
        return `${p.order.orderId}: expected ${p.expected}, ended ${r?.processState ?? "(no record)"} with failureCount ${r?.failureCount ?? "?"}`;
      });
  }

  /** Messages on `queue` (or its dead-letter subqueue) now, left in place; a fresh client for a fresh cursor. */
  private async peek(queue: string, deadLetter: boolean) {
    const client = new ServiceBusClient(this.target.emulators.serviceBusConnectionString);
    try {
      const receiver = client.createReceiver(queue, deadLetter ? { subQueueType: "deadLetter" } : {});
      return await receiver.peekMessages(250);
    } finally {
      await client.close();
    }
  }

  /** The ledger and the stock of every sku planned, read until no ledger entry appears in between (soak.ts). */
  private async settledLedgerAndStock(): Promise<{ ledger: LedgerEntry[]; stock: Map<string, number> }> {
    const skus = [...new Set(this.planned.flatMap((p) => p.order.items.map((i) => i.sku)))].sort();
    const readLedger = async () =>
      ((await (await fetch(`${this.sim}/_ledger`)).json()) as { entries: LedgerEntry[] }).entries;
    const fingerprint = (entries: LedgerEntry[]) =>
      entries.map((e) => `${e.idempotencyKey}:${e.applied}`).join();
    for (let round = 0; ; round++) {
      const before = await readLedger();
      const stock = new Map<string, number>();
      for (const sku of skus) {
        const res = await fetch(`${this.sim}/inventory/stock/${encodeURIComponent(sku)}`);
        stock.set(sku, ((await res.json()) as { available: number }).available);
      }
      const after = await readLedger();
      if (fingerprint(before) === fingerprint(after) || round >= 20) return { ledger: after, stock };
      await sleep(500);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.pending.splice(0));
    await this.alerts.close().catch(() => undefined);
    await this.bus.close();
    this.reader.close();
  }
}

/** One line per scenario for the run's output: states, failure counts, the front door's answers, dead letters. */
export function describeReport(name: string, report: FaultScenarioReport): string {
  return (
    `[faults] ${name}: states ${JSON.stringify(report.states)}; failureCounts ${JSON.stringify(report.failureCounts)}; ` +
    `front door ${JSON.stringify(report.frontDoor)}; dead letters ${JSON.stringify(report.deadLetters)}`
  );
}

/** Alternates the channels: even indices through the front door, odd ones straight onto `orders`. */
export const alternate = (index: number): Channel => (index % 2 === 0 ? "api" : "queue");
