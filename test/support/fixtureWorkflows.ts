/**
 * Workflows the engine's tests run on, so that changing the business process (src/domain/process.ts) breaks no
 * engine test: the state machine, the reply and request checks and the status messages are generic over a
 * WorkflowDefinition, and their tests say so by running on these instead of orderWorkflowV1. Each step calls a
 * declared service (AGENT_NAMES, taken in turn; for a step with an undo, those declaring two operations) with
 * operations that service declares, since a record's step must name a declared agent; the steps are named
 * neutrally (step1, step2, …) and their bodies are simple and predictable. A test that is about the sample process
 * itself uses orderWorkflowV1, and says so.
 */
import {
  AGENT_NAMES,
  SERVICES,
  stepProblems,
  type Order,
  type StepDefinition,
  type WorkflowDefinition,
} from "../../src/domain";

/** The body a fixture step's forward request sends: the order and the step, nothing of the business. */
export function fixtureDoRequest(order: Order, stepName: string): Record<string, unknown> {
  return { orderId: order.orderId, step: stepName };
}

/** The declared services with an operation to do and another to undo it: those a fixture step with an undo calls. */
const UNDOING_SERVICES = AGENT_NAMES.filter((s) => SERVICES[s].operations.length > 1);

/**
 * Step `index` (0-based) of a fixture workflow: service `index mod` the declared ones, its first operation and,
 * unless `undo` is false (a step without undo, such as a read-only check), its last as the undo; a step with an undo
 * takes its service among those that declare two operations or more.
 */
export function fixtureStep(index: number, undo = true): StepDefinition {
  const services = undo ? UNDOING_SERVICES : AGENT_NAMES;
  if (services.length === 0) throw new Error("no declared service has two operations, a do and its undo");
  const agent = services[index % services.length]!;
  const operations: readonly string[] = SERVICES[agent].operations;
  const name = `step${index + 1}`;
  const doRequest = (order: Order) => fixtureDoRequest(order, name);
  const step: StepDefinition = undo
    ? {
        name,
        agent,
        doOperation: operations[0]!,
        undoOperation: operations[operations.length - 1]!,
        doRequest,
        compensationFrom: (result) => {
          const ref = (result as Record<string, unknown> | null)?.["ref"];
          return typeof ref === "string" ? { ref } : null;
        },
        undoRequest: (order, compensation) => ({ orderId: order.orderId, step: name, ...compensation }),
      }
    : { name, agent, doOperation: operations[0]!, doRequest };
  const problems = stepProblems(SERVICES, step, "test/support/fixtureWorkflows.ts");
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return step;
}

/**
 * A fixture workflow of `stepCount` steps, version 1, named `fixture<stepCount>`, or, with steps without undo (their
 * 0-based indices in `withoutUndo`), `fixture<stepCount>-noundo<step numbers>`.
 */
export function fixtureWorkflow(stepCount: number, withoutUndo: readonly number[] = []): WorkflowDefinition {
  const suffix = withoutUndo.length > 0 ? `-noundo${withoutUndo.map((i) => i + 1).join("")}` : "";
  return Object.freeze({
    name: `fixture${stepCount}${suffix}`,
    version: 1,
    steps: Object.freeze(
      Array.from({ length: stepCount }, (_, i) => fixtureStep(i, !withoutUndo.includes(i))),
    ),
  });
}

export const FIXTURE_2 = fixtureWorkflow(2);
export const FIXTURE_3 = fixtureWorkflow(3);
export const FIXTURE_5 = fixtureWorkflow(5);
/**
 * Four steps, the second and the last without undo: a check between two steps that are undone (the fraud screen
 * of docs/extending.md) and a closing notification. Compensation passes both.
 */
export const FIXTURE_WITHOUT_UNDO = fixtureWorkflow(4, [1, 3]);

/**
 * The workflows the engine's tests run on: the shortest with an undo before the last step, a middle one, a longer
 * one, and one with steps without undo.
 */
export const FIXTURE_WORKFLOWS: readonly WorkflowDefinition[] = [
  FIXTURE_2,
  FIXTURE_3,
  FIXTURE_5,
  FIXTURE_WITHOUT_UNDO,
];

/** The workflow the record builders of ./domain use unless told otherwise. */
export const DEFAULT_FIXTURE = FIXTURE_3;
