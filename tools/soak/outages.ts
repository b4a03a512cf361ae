/**
 * What a soak run's declared outage did, read from outside the app: the breaker's outages as its alerts tell them,
 * and the calls the outage failed, as the simulator saw them.
 */
import { BREAKER } from "../../src/domain";
import type { KillWindow } from "./invariants";
import type { ObservedAlert } from "./observe";

/** When the declared outage began and ended, in ISO time. */
export interface OutageWindow {
  service: string;
  from: string;
  to: string;
}

/** One outage of a service's breaker as its alerts tell it (MessageId `breaker:<service>:<outage>:<kind>`). */
export interface ServiceOutage {
  service: string;
  outage: number;
  openedAt?: string;
  recoveredAt?: string;
}

/**
 * The outages the alerts tell, per service and outage number. A short false outage may open beside the declared one
 * (a few orders failing on their own faults at once), and one opened when no order needs the service any more is
 * never probed, so it stays open: the declared outage is the one open during the declared window.
 */
export function serviceOutages(alerts: readonly ObservedAlert[]): ServiceOutage[] {
  const outages = new Map<string, ServiceOutage>();
  for (const alert of alerts) {
    const match = /^breaker:([^:]+):(\d+):(ServiceUnavailable|ServiceRecovered)$/.exec(alert.messageId ?? "");
    if (!match) continue;
    const [, service, outage, kind] = match as unknown as [string, string, string, string];
    const key = `${service}:${outage}`;
    const entry = outages.get(key) ?? { service, outage: Number(outage) };
    if (kind === "ServiceUnavailable") entry.openedAt = alert.at;
    else entry.recoveredAt = alert.at;
    outages.set(key, entry);
  }
  return [...outages.values()].sort((a, b) => a.service.localeCompare(b.service) || a.outage - b.outage);
}

/**
 * How long after the simulator answered a call the app has surely recorded its failure on the service's breaker
 * (one write to the store, right after the answer arrives: 0.3 s at most in runs on a throttled CPU). A failure
 * answered less than this before a SIGKILL may have died with the process.
 */
export const OUTAGE_RECORD_MARGIN_MS = 2_000;

/** What the declared outage did to the app's calls, from the simulator's side. */
export interface OutageEvidence {
  /** Calls the outage failed, and how many orders they were for. */
  calls: number;
  orders: number;
  /**
   * Of those, the calls answered at least OUTAGE_RECORD_MARGIN_MS before the app was killed and before the outage
   * ended: failures the app lived to record on the breaker while the outage lasted.
   */
  recorded: { calls: number; orders: number };
  /**
   * Whether the recorded ones meet the breaker's rule (BREAKER.failureThreshold failed calls from
   * BREAKER.distinctOrders orders). The breaker's record is shared and survives kills, and during the outage every
   * call of the service fails, so no answer resets the count (bar a success answered just before the outage began
   * and written after its first failures, which nothing outside the app can see): the breaker must have opened.
   * When they do not (kills and a loaded machine left the app little time to call the service), its opening
   * proves nothing either way.
   */
  opensBreaker: boolean;
}

/** The declared outage's evidence, from the calls it failed (the fault's hitLog), its end and the kills. */
export function outageEvidence(
  hits: ReadonlyArray<{ orderId: string; at: string }>,
  endedAt: number,
  kills: readonly KillWindow[],
): OutageEvidence {
  const recorded = hits.filter((hit) => {
    const at = Date.parse(hit.at);
    const settledAt = at + OUTAGE_RECORD_MARGIN_MS;
    return settledAt <= endedAt && !kills.some((k) => k.killedAt >= at && k.killedAt < settledAt);
  });
  const orders = (of: typeof hits) => new Set(of.map((hit) => hit.orderId)).size;
  return {
    calls: hits.length,
    orders: orders(hits),
    recorded: { calls: recorded.length, orders: orders(recorded) },
    opensBreaker: recorded.length >= BREAKER.failureThreshold && orders(recorded) >= BREAKER.distinctOrders,
  };
}

/** The outage alerted open before the declared window ended and closed after it began, if there is one. */
export function declaredOutage(result: {
  outageWindow: OutageWindow | undefined;
  serviceOutages: readonly ServiceOutage[];
}): ServiceOutage | undefined {
  const window = result.outageWindow;
  if (!window) return undefined;
  return result.serviceOutages.find(
    (o) =>
      o.service === window.service &&
      o.openedAt !== undefined &&
      o.openedAt <= window.to &&
      (o.recoveredAt === undefined || o.recoveredAt >= window.from),
  );
}
