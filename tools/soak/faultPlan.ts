/**
 * A seeded plan of orders and the faults each one meets: which scenario an order gets is drawn from a weighted
 * mix, and its faults are scoped to its orderId in the simulator, so one order's bad luck never spills onto
 * another (only the optional background noise is shared). The same seed gives the same plan.
 */
import type { Order } from "../../src/domain/order";
import { orderWorkflowV1, type ProcessState } from "../../src/domain";
import { sampleOrder } from "../sampleOrders";
import { OPERATIONS, SERVICES, type FaultSpec, type Service } from "../simulator";

/** What one order is put through. */
export const SCENARIOS = {
  none: "no fault",
  declined: "payment declines (over the limit)",
  transientBrief: "1-2 transient errors (agent retries)",
  transientLong: "3-5 transient errors (Supervisor retries)",
  transientForever: "a service that always fails",
  permanent: "permanent refusal of a later step",
  latency: "remote slower than the deadline",
  hang: "remote hangs",
  dropResponse: "response lost after the effect",
  undoRefused: "declined, and the undo is refused",
  undoDropped: "refused, and an undo's response is lost",
} as const;
export type Scenario = keyof typeof SCENARIOS;
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as Scenario[];

export type FaultMix = Partial<Record<Scenario, number>>;

/** The chaos soak's mix: weights, normalised to the sum. */
export const CHAOS_MIX: FaultMix = {
  none: 40,
  declined: 10,
  transientBrief: 9,
  transientLong: 7,
  transientForever: 3,
  permanent: 7,
  latency: 5,
  hang: 6,
  dropResponse: 7,
  undoRefused: 3,
  undoDropped: 3,
};

/** The demo's mix: mostly healthy orders, a few of every kind of trouble. */
export const DEMO_MIX: FaultMix = {
  none: 55,
  declined: 10,
  transientBrief: 8,
  transientLong: 5,
  transientForever: 1,
  permanent: 5,
  latency: 4,
  hang: 4,
  dropResponse: 5,
  undoRefused: 2,
};

export interface PlannedOrder {
  order: Order;
  scenario: Scenario;
  faults: FaultSpec[];
  /** Where the order ends if nothing else goes wrong (no process kill, no background noise). */
  expected: ProcessState;
  /** Its total is over the payment limit: it can never be Processed. */
  declined: boolean;
}

export interface PlanOptions {
  count: number;
  prefix: string;
  random: () => number;
  mix: FaultMix;
  /** STEP_TIMEOUT_SECONDS: a latency fault waits longer than this. */
  stepTimeoutSeconds: number;
  /** AGENT_MAX_ATTEMPTS: calls per delivered request, which sizes the faults meant to outlast them. */
  agentMaxAttempts: number;
}

function pickWeighted(random: () => number, mix: FaultMix): Scenario {
  const entries = SCENARIO_NAMES.map((name) => [name, mix[name] ?? 0] as const).filter(([, w]) => w > 0);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  if (total <= 0) throw new Error("the fault mix has no positive weight");
  let x = random() * total;
  for (const [name, weight] of entries) {
    x -= weight;
    if (x < 0) return name;
  }
  return entries[entries.length - 1]![0];
}

// The services by their place in the process (src/domain/process.ts): a refusal of a later step has earlier
// ones to undo.
const stepServices = orderWorkflowV1.steps.map((s) => s.agent);
const laterServices = stepServices.slice(1);
const lastService = stepServices.at(-1)!;
/** The services whose step has an undo: the only ones an undo fault can name. */
const undoable = (services: readonly Service[]) => services.filter((s) => OPERATIONS[s].undo !== null);
const undoableBeforeLast = undoable(stepServices.slice(0, -1));

const int = (random: () => number, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

export function planOrders(opts: PlanOptions): PlannedOrder[] {
  const { random } = opts;
  const planned: PlannedOrder[] = [];
  for (let i = 1; i <= opts.count; i++) {
    const scenario = pickWeighted(random, opts.mix);
    const declined = scenario === "declined" || scenario === "undoRefused";
    const order = sampleOrder(i, { prefix: opts.prefix, random, declined: declined ? 1 : 0 });
    const orderId = order.orderId;
    const on = (
      service: Service,
      direction: "do" | "undo",
      spec: Omit<FaultSpec, "service" | "orderId" | "operation">,
    ): FaultSpec => {
      const operation = OPERATIONS[service][direction];
      if (operation === null) throw new Error(`the ${service} step declares no undo to fault`);
      return { service, operation, orderId, ...spec } as FaultSpec;
    };
    const service = pick(random, SERVICES);
    let faults: FaultSpec[] = [];
    let expected: ProcessState = "Processed";
    switch (scenario) {
      case "none":
        break;
      case "declined":
        expected = "Compensated";
        break;
      case "transientBrief":
        faults = [on(service, "do", { kind: "transient", count: int(random, 1, opts.agentMaxAttempts - 1) })];
        break;
      case "transientLong":
        faults = [
          on(service, "do", {
            kind: "transient",
            count: int(random, opts.agentMaxAttempts, opts.agentMaxAttempts + 2),
          }),
        ];
        break;
      case "transientForever":
        faults = [on(service, "do", { kind: "transient" })];
        expected = "Error";
        break;
      case "permanent":
        // A later step refuses: the earlier ones are undone in reverse order.
        faults = [on(pick(random, laterServices), "do", { kind: "permanent", count: 1 })];
        expected = "Compensated";
        break;
      case "latency":
        // Every call of one attempt answers after the deadline: the effect lands late, the step times out.
        faults = [
          on(service, "do", {
            kind: "latency",
            latencyMs: (opts.stepTimeoutSeconds + 1) * 1000,
            count: opts.agentMaxAttempts,
          }),
        ];
        break;
      case "hang":
        faults = [on(service, "do", { kind: "hang", count: int(random, 1, opts.agentMaxAttempts) })];
        break;
      case "dropResponse":
        faults = [on(service, "do", { kind: "drop-response", count: 1 })];
        break;
      case "undoRefused":
        // Payment declines (the simulator's limit); undoing the first step is then refused for good: an operator
        // must act.
        faults = [on(undoable(stepServices)[0]!, "undo", { kind: "permanent", count: 1 })];
        expected = "CompensationFailed";
        break;
      case "undoDropped":
        faults = [
          on(lastService, "do", { kind: "permanent", count: 1 }),
          on(pick(random, undoableBeforeLast), "undo", { kind: "drop-response", count: 1 }),
        ];
        expected = "Compensated";
        break;
    }
    planned.push({ order, scenario, faults, expected, declined });
  }
  return planned;
}
