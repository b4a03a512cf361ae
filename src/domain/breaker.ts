/**
 * The circuit breaker of one remote service, shared by every instance of the app: one small record per service
 * in the `leases` container, written with a conditional replace like a lease. Pure functions here decide; its
 * adapter, src/remote/sharedBreaker.ts, reads, writes and sends the alerts they decide.
 *
 * closed ──(BREAKER.failureThreshold consecutive failed calls, from at least BREAKER.distinctOrders orders)──▶ open
 * open ──(retryAt reached: the first call takes the probe)──▶ halfOpen
 * halfOpen ──(the probe succeeds)──▶ closed          halfOpen ──(the probe fails)──▶ open, for twice as long
 *
 * Twice as long only when the probe came from an order whose calls had not failed on this service lately (its
 * suspects): a few orders whose own requests keep failing (three poison payloads at once) may open the circuit,
 * but their failed probes must not stretch a false outage to minutes for every other order waiting. The suspects
 * outlive the streak and the outage: a poison order fails, a success in between resets the streak, and its next
 * attempt, often the probe of a later false outage, fails again just the same.
 *
 * Failures must come from several orders because one order whose own payload always fails the service is that
 * order's problem, not an outage: it must spend its own retry budget and end in Error, while the service keeps
 * serving every other order.
 */
import { z } from "zod";
import { boundedText, isoTimestamp, MAX_REASON_LENGTH } from "./validation";
import { agentNameSchema, type AgentName } from "./workflow";

/** The breaker's fixed tuning; the open period's first length is the setting BREAKER_OPEN_SECONDS. */
export const BREAKER = {
  /** Consecutive failed calls (each try of an agent's retries counts) that open the circuit. */
  failureThreshold: 5,
  /** ...when they came from at least this many different orders. */
  distinctOrders: 3,
  /** The orders of the failure streak (failingOrders) a record remembers. */
  streakOrdersKept: 20,
  /**
   * The orders whose calls failed here lately (suspects) a record remembers. A failed probe by one of them is weak
   * evidence (its own request may be what fails), so it does not lengthen the open period, and the starter lets
   * another order probe first. Enough for every order retrying a failure at once in a quiet hour, when a few
   * poison orders can open a breaker; under load their failures never make a streak.
   */
  suspectsKept: 50,
  /** Each failed probe doubles the open period, up to this. */
  maxOpenSeconds: 300,
  /**
   * How long the probe's holder has to report back (one call and its timeout, with margin) before another
   * caller may take the probe over: a prober that crashed must not keep the circuit half-open for ever.
   */
  probeMarginSeconds: 5,
} as const;

export const BREAKER_STATES = ["closed", "open", "halfOpen"] as const;
export type BreakerStateName = (typeof BREAKER_STATES)[number];

export const SERVICE_ALERT_KINDS = ["ServiceUnavailable", "ServiceRecovered"] as const;

export const breakerAlertSchema = z.strictObject({
  kind: z.enum(SERVICE_ALERT_KINDS),
  reason: z.string(),
  /** `breaker:<service>:<outage>:<kind>`: one message per outage and kind, however often it is sent. */
  messageId: z.string().min(1),
  decidedAt: isoTimestamp,
  sentAt: isoTimestamp.nullable(),
});
export type BreakerAlert = z.infer<typeof breakerAlertSchema>;

export const breakerRecordSchema = z.looseObject({
  id: z.string().min(1),
  /** The `leases` container's partition key: the record's own id. */
  orderId: z.string().min(1),
  service: agentNameSchema,
  state: z.enum(BREAKER_STATES),
  /** Consecutive failed calls seen while closed. */
  failures: z.number().int().nonnegative(),
  /**
   * The orders those failures came from, and in an outage those whose probes failed: the latest
   * BREAKER.streakOrdersKept of them.
   */
  failingOrders: z.array(z.string()),
  /**
   * The orders whose last call here failed, the latest BREAKER.suspectsKept (isSuspect). Another order's success
   * does not clear them, nor does a closing; the order's own success does. Default []: records written before it
   * existed.
   */
  suspects: z.array(z.string()).default([]),
  /** Start of the current outage (first opening); null while closed. */
  openedAt: isoTimestamp.nullable(),
  /** While open: when the next probe may start. */
  retryAt: isoTimestamp.nullable(),
  /** Failed probes in this outage from orders not suspected (isSuspect): the open period doubles with each. */
  failedProbes: z.number().int().nonnegative(),
  /** Failed probes in this outage from suspected orders, which reopened the circuit for the same period. */
  suspectProbes: z.number().int().nonnegative().default(0),
  /** While half-open: the order whose call is the probe, and until when it holds it. */
  probe: z.strictObject({ orderId: z.string().min(1), until: isoTimestamp }).nullable(),
  /** Outages so far, numbering the alerts' MessageIds. */
  outages: z.number().int().nonnegative(),
  /**
   * The alerts its transitions decided, oldest first: every unsent one and the last sent ones, so that an outage
   * that ends before its ServiceUnavailable went out still has both sent.
   */
  alerts: z.array(breakerAlertSchema),
  updatedAt: isoTimestamp,
  _etag: z.string().optional(),
});
export type BreakerRecord = z.infer<typeof breakerRecordSchema>;

/** The fields of a closed breaker with nothing counted: a new record, and one a successful call closes. */
const closedState = () =>
  ({
    state: "closed",
    failures: 0,
    failingOrders: [],
    openedAt: null,
    retryAt: null,
    failedProbes: 0,
    suspectProbes: 0,
    probe: null,
  }) satisfies Partial<BreakerRecord>;

export const breakerRecordId = (service: AgentName): string => `breaker:${service}`;

export function closedBreaker(service: AgentName, now: Date): BreakerRecord {
  const id = breakerRecordId(service);
  return {
    id,
    orderId: id,
    service,
    ...closedState(),
    suspects: [],
    outages: 0,
    alerts: [],
    updatedAt: now.toISOString(),
  };
}

export interface BreakerSettings {
  /** The first open period (BREAKER_OPEN_SECONDS). */
  openSeconds: number;
  /** One call's timeout (AGENT_ATTEMPT_TIMEOUT_SECONDS): how long a probe may take. */
  callTimeoutSeconds: number;
}

/** What a caller may do: call, call as the probe (the record must be written first), or not call until `until`. */
export type Admission =
  { kind: "call" } | { kind: "probe"; record: BreakerRecord } | { kind: "refuse"; until: Date };

const later = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** Open period after `failedProbes` failed probes: the first length, doubled per failed probe, capped. */
export function openSeconds(settings: BreakerSettings, failedProbes: number): number {
  return Math.min(settings.openSeconds * 2 ** failedProbes, BREAKER.maxOpenSeconds);
}

/** May `orderId`'s call start now? */
export function admit(
  record: BreakerRecord,
  orderId: string,
  now: Date,
  settings: BreakerSettings,
): Admission {
  if (record.state === "closed") return { kind: "call" };
  const at = now.toISOString();
  if (record.state === "open" && record.retryAt !== null && record.retryAt > at) {
    return { kind: "refuse", until: new Date(record.retryAt) };
  }
  if (record.state === "halfOpen" && record.probe !== null && record.probe.until > at) {
    return record.probe.orderId === orderId
      ? { kind: "call" }
      : { kind: "refuse", until: new Date(record.probe.until) };
  }
  // Open and due, or a probe whose holder never reported back: this call is the probe.
  const until = later(now, settings.callTimeoutSeconds + BREAKER.probeMarginSeconds).toISOString();
  return {
    kind: "probe",
    record: { ...record, state: "halfOpen", probe: { orderId, until }, updatedAt: at },
  };
}

/**
 * Until when calls are sure to be refused, for admission control: the open period's end, or the live probe's
 * deadline; null when a call (or a probe) may start now.
 */
export function unavailableUntil(record: BreakerRecord, now: Date): Date | null {
  const at = now.toISOString();
  if (record.state === "open" && record.retryAt !== null && record.retryAt > at)
    return new Date(record.retryAt);
  if (record.state === "halfOpen" && record.probe !== null && record.probe.until > at)
    return new Date(record.probe.until);
  return null;
}

/** Would this failure open the circuit? (The caller then counts the waiting orders for the alert.) */
export function opensOnFailure(record: BreakerRecord, orderId: string): boolean {
  if (record.state !== "closed") return false;
  const orders = withOrder(record.failingOrders, orderId, BREAKER.streakOrdersKept);
  return record.failures + 1 >= BREAKER.failureThreshold && orders.length >= BREAKER.distinctOrders;
}

/** `orders` with `orderId` as the latest, at most `kept` of them. */
function withOrder(orders: readonly string[], orderId: string, kept: number): string[] {
  return [...orders.filter((o) => o !== orderId), orderId].slice(-kept);
}

/**
 * Have `orderId`'s calls failed on this service lately (suspects), or in the current streak or outage? Its probe's
 * failure then says little about the service, and another order should probe first. (failingOrders too, for a
 * record written before suspects existed.)
 */
export const isSuspect = (record: BreakerRecord, orderId: string): boolean =>
  record.suspects.includes(orderId) || record.failingOrders.includes(orderId);

/**
 * A failed call (5xx, 408, 429, timeout, network error). Returns the record to write, or null when nothing
 * changes (the circuit is already open: a late failure of a call admitted before it opened).
 */
export function recordFailure(
  record: BreakerRecord,
  orderId: string,
  now: Date,
  settings: BreakerSettings,
  /** Orders not finished, for the alert that an opening decides. */
  waitingOrders: number | null,
): BreakerRecord | null {
  const at = now.toISOString();
  if (record.state === "open") return null;
  if (record.state === "halfOpen") {
    // A failure from an order that already failed here reopens for the same period; any other's doubles it.
    const suspect = isSuspect(record, orderId);
    const failedProbes = record.failedProbes + (suspect ? 0 : 1);
    return {
      ...record,
      state: "open",
      probe: null,
      failingOrders: withOrder(record.failingOrders, orderId, BREAKER.streakOrdersKept),
      suspects: withOrder(record.suspects, orderId, BREAKER.suspectsKept),
      failedProbes,
      suspectProbes: record.suspectProbes + (suspect ? 1 : 0),
      retryAt: later(now, openSeconds(settings, failedProbes)).toISOString(),
      updatedAt: at,
    };
  }
  const failingOrders = withOrder(record.failingOrders, orderId, BREAKER.streakOrdersKept);
  const suspects = withOrder(record.suspects, orderId, BREAKER.suspectsKept);
  const failures = record.failures + 1;
  if (!opensOnFailure(record, orderId))
    return { ...record, failures, failingOrders, suspects, updatedAt: at };
  const outages = record.outages + 1;
  const retryAt = later(now, openSeconds(settings, 0)).toISOString();
  return {
    ...record,
    state: "open",
    failures,
    failingOrders,
    suspects,
    openedAt: at,
    retryAt,
    failedProbes: 0,
    suspectProbes: 0,
    probe: null,
    outages,
    alerts: withAlert(
      record.alerts,
      record.service,
      outages,
      "ServiceUnavailable",
      `${record.service}: ${failures} consecutive calls failed, from ${failingOrders.length} orders; ` +
        `calls stop until ${retryAt}, then one probe decides` +
        (waitingOrders === null ? "" : `; ${waitingOrders} orders are not finished and wait for it`),
      now,
    ),
    updatedAt: at,
  };
}

/** What the recovery alert sums up: orders parked now, and orders the outage sent to Error (OUTAGE_MAX_SECONDS). */
export interface RecoveryCounts {
  parked: number;
  outlasted: number;
}

/** `orderId`'s call was answered (any 2xx or 4xx: the service is up). Null when nothing changes. */
export function recordSuccess(
  record: BreakerRecord,
  orderId: string,
  now: Date,
  counts: RecoveryCounts | null,
): BreakerRecord | null {
  const at = now.toISOString();
  // Its own request works after all: no longer a suspect.
  const suspects = record.suspects.filter((o) => o !== orderId);
  if (record.state === "closed") {
    return record.failures === 0 &&
      record.failingOrders.length === 0 &&
      suspects.length === record.suspects.length
      ? null
      : { ...record, failures: 0, failingOrders: [], suspects, updatedAt: at };
  }
  const seconds = record.openedAt ? Math.round((now.getTime() - Date.parse(record.openedAt)) / 1000) : 0;
  return {
    ...record,
    ...closedState(),
    suspects,
    alerts: withAlert(
      record.alerts,
      record.service,
      record.outages,
      "ServiceRecovered",
      `${record.service} answers again after ${seconds} s unavailable (since ${record.openedAt ?? "unknown"}, ` +
        `${record.failedProbes} failed probe${record.failedProbes === 1 ? "" : "s"}` +
        (record.suspectProbes > 0
          ? `, and ${record.suspectProbes} from orders whose own calls had failed`
          : "") +
        ")" +
        (counts === null
          ? ""
          : `; ${counts.parked} parked orders resume` +
            (counts.outlasted > 0
              ? `; ${counts.outlasted} orders waited longer than OUTAGE_MAX_SECONDS and are in Error (each with its own alert; retry them in bulk)`
              : "")),
      now,
    ),
    updatedAt: at,
  };
}

/** Is this a change that closes the circuit? (The caller then counts the parked orders for the alert.) */
export const closesOnSuccess = (record: BreakerRecord): boolean => record.state !== "closed";

/** Alerts kept once sent, besides the unsent ones. */
const SENT_ALERTS_KEPT = 2;

function withAlert(
  alerts: readonly BreakerAlert[],
  service: AgentName,
  outage: number,
  kind: BreakerAlert["kind"],
  reason: string,
  now: Date,
): BreakerAlert[] {
  const decided: BreakerAlert = {
    kind,
    reason: boundedText(reason, MAX_REASON_LENGTH),
    messageId: `breaker:${service}:${outage}:${kind}`,
    decidedAt: now.toISOString(),
    sentAt: null,
  };
  const sent = alerts.filter((a) => a.sentAt !== null).slice(-SENT_ALERTS_KEPT);
  const unsent = alerts.filter((a) => a.sentAt === null && a.messageId !== decided.messageId);
  return [...sent, ...unsent, decided];
}

export const unsentAlerts = (record: BreakerRecord): BreakerAlert[] =>
  record.alerts.filter((a) => a.sentAt === null);

/** The decided alert went out: returns the record to write, or null when it was already marked (or replaced). */
export function breakerAlertSent(record: BreakerRecord, messageId: string, now: Date): BreakerRecord | null {
  const at = now.toISOString();
  if (!record.alerts.some((a) => a.messageId === messageId && a.sentAt === null)) return null;
  return {
    ...record,
    alerts: record.alerts.map((a) =>
      a.messageId === messageId && a.sentAt === null ? { ...a, sentAt: at } : a,
    ),
    updatedAt: at,
  };
}
