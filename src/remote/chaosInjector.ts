import { setTimeout as sleep } from "node:timers/promises";
import { drawChaos, type AgentName, type ChaosDraw, type ChaosSettings } from "../domain";
import type { Logger } from "../telemetry/logger";

/**
 * A fault chaos injected: thrown in place of the call, so the service receives nothing. Transient, as a refused
 * connection is: the agent retries it, the circuit breaker counts it, and the reply carries its code.
 */
export class InjectedFaultError extends Error {
  readonly code = "ChaosFault";
  constructor(service: AgentName) {
    super(`injected chaos: the call to ${service} failed before it was made (CHAOS_FAULT_RATE)`);
    this.name = "InjectedFaultError";
  }
}

/** The attempt chaos may hit, as the remote-service client knows it. */
export interface ChaosAttempt {
  operation: string;
  /** `<orderId>:<step>:<do|undo>`: names the order and the step in the log, as in the simulator's ledger. */
  idempotencyKey: string;
  /** 1 for the first call of a request, then one more per retry. */
  attempt: number;
  /** The attempt's own signal (its timeout and the step's deadline): an injected wait ends with it. */
  signal: AbortSignal;
  log: Logger;
}

/** One injection, as reported. */
export interface ChaosInjection {
  service: AgentName;
  kind: "latency" | "fault";
  /** For latency: how long the attempt waits before calling. */
  latencyMs?: number;
  attempt: ChaosAttempt;
  /** What this instance has injected into this service's calls so far, this one included. */
  totals: { latency: number; fault: number };
}

/**
 * The chaos strategy of one service's resilience pipeline (the remote-service client runs it inside each attempt,
 * before the real call). It draws from the random source it is given: the composition root passes Math.random,
 * tests a seeded generator, so the same seed injects into the same attempts.
 */
export class ChaosInjector {
  private readonly totals = { latency: 0, fault: 0 };

  constructor(
    readonly service: AgentName,
    private readonly settings: ChaosSettings,
    private readonly random: () => number,
  ) {}

  /** What chaos does to the next attempt; null when it leaves it alone. */
  next(): ChaosDraw | null {
    const draw = drawChaos(this.settings, this.random);
    return draw.latencyMs !== null || draw.fault ? draw : null;
  }

  /**
   * Carries out `draw` before the attempt's real call: waits (ended early, by rejecting, when the attempt's signal
   * aborts, as a slow call would be), then throws InjectedFaultError if the draw says fault.
   */
  async inject(draw: ChaosDraw, attempt: ChaosAttempt): Promise<void> {
    if (draw.latencyMs !== null) {
      this.totals.latency++;
      reportInjection({
        service: this.service,
        kind: "latency",
        latencyMs: draw.latencyMs,
        attempt,
        totals: { ...this.totals },
      });
      await sleep(draw.latencyMs, undefined, { signal: attempt.signal });
    }
    if (draw.fault) {
      this.totals.fault++;
      reportInjection({ service: this.service, kind: "fault", attempt, totals: { ...this.totals } });
      throw new InjectedFaultError(this.service);
    }
  }
}

/**
 * The one place an injection is reported: a warning naming the service, the step, the kind and that it is
 * injected chaos, with this instance's totals. When the app gets tracing, the span event for an injection
 * belongs here too (the attempt's span is the active one while this runs).
 */
export function reportInjection(injection: ChaosInjection): void {
  const { service, attempt, totals } = injection;
  const what =
    injection.kind === "latency" ? `latency ${(injection.latencyMs ?? 0) / 1000} s` : "fault, no call made";
  attempt.log.warn(
    `${service}: injected chaos (${what}) before attempt ${attempt.attempt} of ${attempt.operation} for ` +
      `${attempt.idempotencyKey}; this instance has injected ${totals.latency} latency and ${totals.fault} ` +
      `fault(s) into ${service} calls`,
  );
}
