import { z } from "zod";
import type { Order } from "./order";
import { ORDER_WORKFLOWS, SERVICES } from "./process";

/** The declared services' names (src/domain/process.ts), in declaration order. */
export type AgentName = keyof typeof SERVICES;
export const AGENT_NAMES = Object.keys(SERVICES) as readonly AgentName[] as readonly [
  AgentName,
  ...AgentName[],
];
export const agentNameSchema = z.enum(AGENT_NAMES);

/** What every step declares: its name, the service it calls, and the forward request. */
interface StepBase {
  /** Stable step name: part of idempotency keys, so never rename a step of a released version. */
  readonly name: string;
  readonly agent: AgentName;
  /** Remote operation that performs the step, e.g. `reserve`. */
  readonly doOperation: string;
  /**
   * Body of the forward request. Built from the immutable order only, so every attempt sends the same body
   * under the same idempotency key.
   */
  doRequest(order: Order): Record<string, unknown>;
}

/** A step whose effect compensation takes back: its undo operation, and the body that undo sends. */
export interface UndoableStepDefinition extends StepBase {
  /** Remote operation that undoes it, e.g. `release`. */
  readonly undoOperation: string;
  /** What the undo needs, taken from the forward result (e.g. the chargeId); recorded with the success. */
  compensationFrom(result: unknown): Record<string, unknown> | null;
  /**
   * Body of the undo request. `compensation` is null when the forward outcome is unknown (reply lost): the
   * undo then names the order only, and the service undoes whatever that order has.
   */
  undoRequest(order: Order, compensation: Record<string, unknown> | null): Record<string, unknown>;
}

/**
 * A step with nothing to take back (a read-only check, a notification): it declares none of the undo's three
 * parts, and compensation passes it. A refusal by it still compensates the steps before it.
 */
export interface StepWithoutUndoDefinition extends StepBase {
  readonly undoOperation?: never;
  readonly compensationFrom?: never;
  readonly undoRequest?: never;
}

/** A step of a workflow: with its undo declared whole, or with none of it. */
export type StepDefinition = UndoableStepDefinition | StepWithoutUndoDefinition;

/** Whether the step declares an undo (checkProcess refuses a declaration with only part of one). */
export function hasUndo(step: StepDefinition): step is UndoableStepDefinition {
  return step.undoOperation !== undefined;
}

export interface WorkflowDefinition {
  readonly name: string;
  readonly version: number;
  readonly steps: readonly StepDefinition[];
}

export const workflowRefSchema = z.strictObject({
  name: z.string().min(1),
  version: z.number().int().positive(),
});
export type WorkflowRef = z.infer<typeof workflowRefSchema>;

/**
 * How many dispatches one attempt's orchestration may make. An attempt dispatches each forward step at most once
 * and, after a refusal, each undo at most once, so a workflow of n steps needs up to 2n: registration refuses a
 * workflow longer than MAX_ORCHESTRATION_TURNS / 2 steps, which the orchestration could not finish.
 */
export const MAX_ORCHESTRATION_TURNS = 64;
export const MAX_WORKFLOW_STEPS = MAX_ORCHESTRATION_TURNS / 2;

/**
 * Workflows by name and version. A record carries the version it started on and keeps running on it, so a new
 * version is registered beside the old ones, never in place of them, until no record in flight uses the old one.
 */
export class WorkflowRegistry {
  private readonly byKey = new Map<string, WorkflowDefinition>();
  private readonly latestByName = new Map<string, WorkflowDefinition>();

  constructor(definitions: readonly WorkflowDefinition[] = []) {
    for (const definition of definitions) this.register(definition);
  }

  register(definition: WorkflowDefinition): void {
    const key = `${definition.name}@${definition.version}`;
    if (this.byKey.has(key)) throw new Error(`workflow ${key} is already registered`);
    if (definition.steps.length === 0) throw new Error(`workflow ${key} has no steps`);
    if (definition.steps.length > MAX_WORKFLOW_STEPS) {
      throw new Error(
        `workflow ${key} has ${definition.steps.length} steps; an attempt can run at most ${MAX_WORKFLOW_STEPS} (MAX_ORCHESTRATION_TURNS / 2)`,
      );
    }
    const names = new Set(definition.steps.map((s) => s.name));
    if (names.size !== definition.steps.length) throw new Error(`workflow ${key} has duplicate step names`);
    this.byKey.set(key, definition);
    const latest = this.latestByName.get(definition.name);
    if (!latest || latest.version < definition.version) this.latestByName.set(definition.name, definition);
  }

  /** The definition a record started on; undefined when this build no longer knows it (see versioning docs). */
  get(ref: WorkflowRef): WorkflowDefinition | undefined {
    return this.byKey.get(`${ref.name}@${ref.version}`);
  }

  /** New orders start on the newest registered version. */
  latest(name: string): WorkflowDefinition {
    const latest = this.latestByName.get(name);
    if (!latest) throw new Error(`no workflow named ${name} is registered`);
    return latest;
  }

  list(): WorkflowDefinition[] {
    return [...this.byKey.values()];
  }
}

/** Every version the process declares (ORDER_WORKFLOWS in ./process). */
export const defaultWorkflows = (): WorkflowRegistry => new WorkflowRegistry(ORDER_WORKFLOWS);
