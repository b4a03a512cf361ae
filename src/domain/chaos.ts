/**
 * Chaos in staging: latency and faults injected into an agent's remote calls on purpose, attempt by attempt,
 * so that the agents' retries, attempt timeouts, deadlines and the shared circuit breaker, and then the
 * Scheduler and the Supervisor, meet a slow or failing service in a real deployment (docs/chaos.md, "Chaos in
 * staging"). The CHAOS_* settings (src/config.ts) say what to inject; this module decides, per attempt, from a
 * random source the caller gives; src/remote/chaosInjector.ts injects and reports.
 */
import type { AgentName } from "./workflow";

/** What the CHAOS_* settings ask for, once CHAOS_ENABLED=true has let them through. */
export interface ChaosSettings {
  /** The services whose calls chaos may hit (CHAOS_SERVICES). */
  services: readonly AgentName[];
  /** Share of attempts delayed before the call (CHAOS_LATENCY_RATE), 0 to 1. */
  latencyRate: number;
  /** How long a delayed attempt waits before calling (CHAOS_LATENCY_SECONDS). */
  latencyMs: number;
  /** Share of attempts failed before the call, as a connection failure would (CHAOS_FAULT_RATE), 0 to 1. */
  faultRate: number;
}

/** What chaos does to one attempt: wait first (latencyMs), then fail instead of calling (fault), or neither. */
export interface ChaosDraw {
  latencyMs: number | null;
  fault: boolean;
}

/**
 * Decides one attempt. Each attempt draws twice, latency first and then fault, whatever the rates, so that one
 * seed gives one sequence of decisions whichever kinds are switched on. An attempt may be both delayed and then
 * failed, as a call that hangs and then loses its connection.
 */
export function drawChaos(settings: ChaosSettings, random: () => number): ChaosDraw {
  const delayed = random() < settings.latencyRate;
  const fault = random() < settings.faultRate;
  return { latencyMs: delayed ? settings.latencyMs : null, fault };
}
