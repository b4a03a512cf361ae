/**
 * What the app's tests expect of an order, derived from the process declaration (src/domain/process.ts) rather
 * than restated: the ledger of a processed order and of one refused at step k, its steps' states, the status
 * messages its submitter hears. A fork that changes the steps changes these with them. Every function takes the
 * workflow, orderWorkflowV1 by default. A step that declares no undo is passed by compensation: no undo call, no
 * undo status.
 */
import { orderWorkflowV1, type AgentName, type StepUse } from "../../src/domain";

/** What these read of a workflow: its steps' names, services and operations (a WorkflowDefinition is one). */
export interface DeclaredSteps {
  readonly name: string;
  readonly version: number;
  readonly steps: readonly StepUse[];
}

/** One remote call as the simulator's ledger records it: `service.operation` and its idempotency key. */
export interface ExpectedCall {
  label: string;
  idempotencyKey: string;
}

/** Whether the step declares an undo (a read-only check or a notification does not). */
export const declaresUndo = (step: StepUse): boolean => step.undoOperation !== undefined;

/** The step's undo operation, failing when it declares none (the scenario needs one). */
function undoOperationOf(step: StepUse): string {
  if (step.undoOperation === undefined) {
    throw new Error(
      `step ${step.name} declares no undo: compensation passes it, and nothing calls an undo for it`,
    );
  }
  return step.undoOperation;
}

/** The index of the step named `name`, failing when the declaration has no such step (the scenario needs it). */
export function stepIndex(name: string, workflow: DeclaredSteps = orderWorkflowV1): number {
  const index = workflow.steps.findIndex((s) => s.name === name);
  if (index < 0) {
    throw new Error(
      `${workflow.name} v${workflow.version} has no step ${name} (steps: ${workflow.steps.map((s) => s.name).join(", ")})`,
    );
  }
  return index;
}

/**
 * The index of the last step that calls a service other than `service`: where a scenario fails an order on its
 * own while `service` is the one it disturbs for everyone (an outage, a breaker it must not open). Throws when
 * every step calls `service`, since the scenario then has no step to fail.
 */
export function lastStepNotOn(service: string, workflow: DeclaredSteps = orderWorkflowV1): number {
  for (let i = workflow.steps.length - 1; i >= 0; i--) if (workflow.steps[i]!.agent !== service) return i;
  throw new Error(
    `every step of ${workflow.name} v${workflow.version} calls ${service}: no other step to fail`,
  );
}

/** Each step's status while step `index` is `status`: the earlier ones Succeeded, the later ones Pending. */
export const stepStatusesAt = (
  index: number,
  status: string,
  workflow: DeclaredSteps = orderWorkflowV1,
): string[] => workflow.steps.map((_, i) => (i < index ? "Succeeded" : i === index ? status : "Pending"));

/**
 * Where a test arms a fault meant for step `index`'s forward call (or, with "undo", its undo). The simulator's
 * faults name a service and an operation (and an order), not a step, so the call must be one no other step makes
 * before it, or the fault would land on that step first: throws, saying so, when the declaration shares it.
 */
export function faultOn(
  index: number,
  kind: "do" | "undo" = "do",
  workflow: DeclaredSteps = orderWorkflowV1,
): { service: AgentName; operation: string } {
  const step = workflow.steps[index];
  if (!step) throw new Error(`${workflow.name} v${workflow.version} has no step ${index}`);
  const operation = kind === "do" ? step.doOperation : undoOperationOf(step);
  const sharing = workflow.steps.filter(
    (s, i) =>
      i !== index &&
      s.agent === step.agent &&
      (kind === "do"
        ? i < index && s.doOperation === operation
        : [s.doOperation, s.undoOperation].includes(operation)),
  );
  if (sharing.length > 0) {
    throw new Error(
      `a fault on ${step.agent}/${operation} meant for step ${step.name} would also hit ${sharing.map((s) => s.name).join(", ")}: ` +
        "the simulator's faults name a service and operation, not a step; this scenario needs a call of its own",
    );
  }
  return { service: step.agent as AgentName, operation };
}

/** The forward call of step `index`. */
export function doCall(
  orderId: string,
  index: number,
  workflow: DeclaredSteps = orderWorkflowV1,
): ExpectedCall {
  const step = workflow.steps[index]!;
  return { label: `${step.agent}.${step.doOperation}`, idempotencyKey: `${orderId}:${step.name}:do` };
}

/** The undo of step `index`, which must declare one. */
export function undoCall(
  orderId: string,
  index: number,
  workflow: DeclaredSteps = orderWorkflowV1,
): ExpectedCall {
  const step = workflow.steps[index]!;
  return { label: `${step.agent}.${undoOperationOf(step)}`, idempotencyKey: `${orderId}:${step.name}:undo` };
}

/**
 * The undos compensation calls from step `highest` down to the one above `stoppedAt` (-1: down to the first),
 * newest first: one per step that declares an undo, none for the steps it passes.
 */
export function undoCalls(
  orderId: string,
  highest: number,
  { stoppedAt = -1, workflow = orderWorkflowV1 }: { stoppedAt?: number; workflow?: DeclaredSteps } = {},
): ExpectedCall[] {
  const calls: ExpectedCall[] = [];
  for (let i = highest; i > stoppedAt; i--) {
    if (declaresUndo(workflow.steps[i]!)) calls.push(undoCall(orderId, i, workflow));
  }
  return calls;
}

/** A processed order's ledger: every step's forward call, in order. */
export function processedLedger(orderId: string, workflow: DeclaredSteps = orderWorkflowV1): ExpectedCall[] {
  return workflow.steps.map((_, i) => doCall(orderId, i, workflow));
}

/**
 * The ledger of an order whose step `refusedAt` was refused: the forward calls up to the refused one (included
 * when the service itself refused it; an injected fault answers before the service, so the call has no entry),
 * then the undo of every earlier step that declares one, newest first; or, when an injected fault refused the undo
 * of step `undoStoppedAt`, only the undos after it.
 */
export function compensatedLedger(
  orderId: string,
  refusedAt: number,
  {
    refusedByService = true,
    undoStoppedAt = -1,
    workflow = orderWorkflowV1,
  }: { refusedByService?: boolean; undoStoppedAt?: number; workflow?: DeclaredSteps } = {},
): ExpectedCall[] {
  if (refusedAt < 0 || refusedAt >= workflow.steps.length) throw new Error(`no step ${refusedAt}`);
  if (undoStoppedAt >= refusedAt) {
    throw new Error(`step ${undoStoppedAt} is not undone after step ${refusedAt}`);
  }
  const reached = refusedByService ? refusedAt + 1 : refusedAt;
  const forward = Array.from({ length: reached }, (_, i) => doCall(orderId, i, workflow));
  return [...forward, ...undoCalls(orderId, refusedAt - 1, { stoppedAt: undoStoppedAt, workflow })];
}

/** The step names of the declaration, in order. */
export const stepNames = (workflow: DeclaredSteps = orderWorkflowV1): string[] =>
  workflow.steps.map((s) => s.name);

/**
 * `[name, status, undo status]` of each step once the refusal at `refusedAt` has been compensated: the earlier ones
 * undone, those without undo passed (no undo status).
 */
export function compensatedSteps(
  refusedAt: number,
  workflow: DeclaredSteps = orderWorkflowV1,
): Array<[string, string, string | null]> {
  return workflow.steps.map((s, i) =>
    i < refusedAt
      ? [s.name, "Succeeded", declaresUndo(s) ? "Succeeded" : null]
      : [s.name, i === refusedAt ? "Failed" : "Pending", null],
  );
}

/**
 * `[name, status, undo status]` of each step once compensation, after the refusal at `refusedAt`, stopped at the
 * undo of step `undoStoppedAt` (left in `undoStatus`): the later ones undone, the earlier ones never reached.
 */
export function compensationStoppedSteps(
  refusedAt: number,
  undoStoppedAt: number,
  undoStatus: string,
  workflow: DeclaredSteps = orderWorkflowV1,
): Array<[string, string, string | null]> {
  return workflow.steps.map((s, i) => {
    if (i >= refusedAt) return [s.name, i === refusedAt ? "Failed" : "Pending", null];
    if (!declaresUndo(s)) return [s.name, "Succeeded", null];
    if (i === undoStoppedAt) return [s.name, "Succeeded", undoStatus];
    return [s.name, "Succeeded", i > undoStoppedAt ? "Succeeded" : null];
  });
}

/** One "stepSucceeded" status per step from `from` on. */
export const stepsSucceeded = (from = 0, workflow: DeclaredSteps = orderWorkflowV1): string[] =>
  Array<string>(workflow.steps.length - from).fill("stepSucceeded");

/**
 * The statuses the submitter of an order processed in one attempt hears, in order: the last step's success and
 * "processed" fall in one write, and are one message.
 */
export const processedStatuses = (workflow: DeclaredSteps = orderWorkflowV1): string[] => [
  "received",
  "processing",
  ...stepsSucceeded(1, workflow),
  "processed",
];

/**
 * The statuses of an order refused at step `refusedAt` and compensated in the same attempt: "compensating" only
 * when an earlier step has an undo to run (with none, the refusal ends the order Compensated at once).
 */
export const compensatedStatuses = (
  refusedAt: number,
  workflow: DeclaredSteps = orderWorkflowV1,
): string[] => [
  "received",
  "processing",
  ...Array<string>(refusedAt).fill("stepSucceeded"),
  ...(workflow.steps.slice(0, refusedAt).some(declaresUndo) ? ["compensating"] : []),
  "compensated",
];
