/**
 * What a soak run does to the app while orders are in flight: SIGKILLs of its process, each followed by a restart on
 * the same data directory, and one declared outage of a remote service. Each runs beside the submissions and tells
 * the run what it did (the kill windows, the outage's window and the calls it failed), since the invariants are
 * judged against exactly that.
 */
import type { AppProcess } from "../appProcess";
import type { Fault, Service, Simulator } from "../simulator";
import type { KillWindow } from "./invariants";
import { OUTAGE_RECORD_MARGIN_MS, type OutageWindow } from "./outages";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface KillPlan {
  app: AppProcess;
  count: number;
  /** Seconds between kills, drawn uniformly from [min, max]. */
  gapSeconds: [number, number];
  random: () => number;
  /** Is some attempt under way (a kill should land mid-step)? */
  busy: () => boolean;
  /** Has every order ended (no kill is left to make)? */
  done: () => boolean;
  /** The declared outage's fault while it lasts. */
  outageFault: () => Fault | undefined;
  /** Each kill is pushed here as it completes, so progress can count them. */
  kills: KillWindow[];
  /** The run's start, for the narration's times. */
  started: number;
  log: (line: string) => void;
}

/** SIGKILLs the app `count` times at seeded gaps, each mid-step, restarting it after up to a second. */
export async function killRepeatedly(plan: KillPlan): Promise<void> {
  const [minGap, maxGap] = plan.gapSeconds;
  for (let k = 0; k < plan.count; k++) {
    await sleep((minGap + plan.random() * (maxGap - minGap)) * 1000);
    // Kill mid-step: wait (briefly) until some attempt is under way.
    for (let wait = 0; wait < 40 && !plan.busy() && !plan.done(); wait++) await sleep(250);
    // Nor within OUTAGE_RECORD_MARGIN_MS of a call the outage failed: its failure may not be on the breaker yet,
    // and the kill would take it along. The outage's breaker then has every failure to count, so the test can
    // require it to open whenever the app made enough calls (outageEvidence).
    for (;;) {
      const last = plan.outageFault()?.hitLog.at(-1);
      const wait = last ? Date.parse(last.at) + OUTAGE_RECORD_MARGIN_MS - Date.now() : 0;
      if (wait <= 0) break;
      await sleep(wait);
    }
    if (plan.done()) break;
    const killedAt = Date.now();
    await plan.app.kill();
    plan.log(`kill ${k + 1}: SIGKILL at ${((killedAt - plan.started) / 1000).toFixed(1)} s`);
    await sleep(plan.random() * 1000);
    await plan.app.start();
    const readyAt = Date.now();
    plan.kills.push({ killedAt, readyAt });
    plan.log(`kill ${k + 1}: app back after ${((readyAt - killedAt) / 1000).toFixed(1)} s`);
  }
}

export interface OutagePlan {
  service: Service;
  afterSeconds: number;
  seconds: number;
}

export interface HeldOutage {
  window: OutageWindow;
  /** The calls it failed, in order. */
  hits: Array<{ orderId: string; at: string }>;
}

/**
 * Makes `service` answer 503 to every call from `afterSeconds` into the run, for `seconds`. The fault overrides every
 * other: an order whose own planned fault would have answered 400 gets the 503 too, since a refusal is an answer and
 * the breaker would take it for the service being up.
 */
export async function holdOutage(
  simulator: Simulator,
  outage: OutagePlan,
  started: number,
  onStart: (fault: Fault) => void,
  log: (line: string) => void,
): Promise<HeldOutage> {
  const { service, afterSeconds, seconds } = outage;
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  await sleep(Math.max(0, started + afterSeconds * 1000 - Date.now()));
  const fault = simulator.injectFault({ service, kind: "transient", status: 503, overrides: true });
  onStart(fault);
  const from = new Date().toISOString();
  log(`outage: ${service} answers 503 to every call from ${elapsed()} s`);
  await sleep(seconds * 1000);
  simulator.removeFault(fault.id);
  log(
    `outage: ${service} is back at ${elapsed()} s ` +
      `(${fault.hits} calls from ${Object.keys(fault.hitsByOrder).length} orders hit it)`,
  );
  return { window: { service, from, to: new Date().toISOString() }, hits: fault.hitLog };
}
