// Injected faults. A fault matches by service, and optionally by operation and order; it fires on the next
// `count` matching calls, with `probability` per call, or (neither given) on every matching call.
// Every firing latency fault adds its delay; of the other kinds, the first firing one in creation order
// decides the call, and only that one is consumed, so faults queue up: "two 503s, then a 400". A fault that
// `overrides` comes before all others: an outage decides every call while it lasts.
import type { FaultKind, FaultSpec } from "./schemas";

export interface Fault extends FaultSpec {
  id: string;
  createdAt: string;
  /** Calls left for a count fault; null when unbounded. */
  remaining: number | null;
  /** How many calls this fault decided (or delayed). */
  hits: number;
  /** The same, per order: how hard each order's calls hit an outage. */
  hitsByOrder: Record<string, number>;
  /** The same, one entry per call, oldest first: when the fault decided (or delayed) which order's call. */
  hitLog: Array<{ orderId: string; at: string }>;
}

export interface FaultDecision {
  /** Sum of the latency faults that fired. */
  delayMs: number;
  /** The fault that decides the call, if any; latency faults never do. */
  outcome?: Fault & { kind: Exclude<FaultKind, "latency"> };
}

export const DEFAULT_LATENCY_MS = 1_000;

export class FaultRegistry {
  private faults: Fault[] = [];
  private nextId = 1;

  constructor(private readonly random: () => number) {}

  add(spec: FaultSpec, now: Date): Fault {
    const fault: Fault = {
      ...spec,
      ...(spec.kind === "latency" ? { latencyMs: spec.latencyMs ?? DEFAULT_LATENCY_MS } : {}),
      id: `F-${this.nextId++}`,
      createdAt: now.toISOString(),
      remaining: spec.count ?? null,
      hits: 0,
      hitsByOrder: {},
      hitLog: [],
    };
    this.faults.push(fault);
    return fault;
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f, hitsByOrder: { ...f.hitsByOrder }, hitLog: [...f.hitLog] }));
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((f) => f.id !== id);
    return this.faults.length < before;
  }

  clear(): void {
    this.faults = [];
    this.nextId = 1;
  }

  decide(service: string, operation: string, orderId: string, now: Date): FaultDecision {
    const decision: FaultDecision = { delayMs: 0 };
    const inTurn = [...this.faults.filter((f) => f.overrides), ...this.faults.filter((f) => !f.overrides)];
    for (const fault of inTurn) {
      if (!matches(fault, service, operation, orderId)) continue;
      if (fault.kind !== "latency" && decision.outcome) continue;
      if (!this.fires(fault)) continue;
      fault.hits += 1;
      fault.hitsByOrder[orderId] = (fault.hitsByOrder[orderId] ?? 0) + 1;
      fault.hitLog.push({ orderId, at: now.toISOString() });
      if (fault.remaining !== null) fault.remaining -= 1;
      if (fault.kind === "latency") decision.delayMs += fault.latencyMs ?? DEFAULT_LATENCY_MS;
      else decision.outcome = fault as FaultDecision["outcome"];
    }
    return decision;
  }

  private fires(fault: Fault): boolean {
    if (fault.remaining !== null) return fault.remaining > 0;
    if (fault.probability !== undefined) return this.random() < fault.probability;
    return true;
  }
}

function matches(fault: Fault, service: string, operation: string, orderId: string): boolean {
  return (
    fault.service === service &&
    (fault.operation === undefined || fault.operation === operation) &&
    (fault.orderId === undefined || fault.orderId === orderId)
  );
}
