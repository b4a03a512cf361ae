/**
 * Workflows the engine's tests run on, so that changing the business process (src/domain/process.ts) breaks no
 * engine test: the state machine, the reply and request checks and the status messages are generic over a
 * WorkflowDefinition, and their tests say so by running on these instead of orderWorkflowV1. Each step calls a
 * declared service (AGENT_NAMES, taken in turn) with operations that service declares, since a record's step must
 * name a declared agent; the steps are named neutrally (step1, step2, …) and their bodies are simple and
 * predictable. A test that is about the sample process itself uses orderWorkflowV1, and says so.
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

/** Step `index` (0-based) of a fixture workflow: service `index mod` the declared ones, its first and last operation. */
export function fixtureStep(index: number): StepDefinition {
  const agent = AGENT_NAMES[index % AGENT_NAMES.length]!;
  const operations: readonly string[] = SERVICES[agent].operations;
  const name = `step${index + 1}`;
  const step: StepDefinition = {
    name,
    agent,
    doOperation: operations[0]!,
    undoOperation: operations[operations.length - 1]!,
    doRequest: (order) => fixtureDoRequest(order, name),
    compensationFrom: (result) => {
      const ref = (result as Record<string, unknown> | null)?.["ref"];
      return typeof ref === "string" ? { ref } : null;
    },
    undoRequest: (order, compensation) => ({ orderId: order.orderId, step: name, ...compensation }),
  };
  const problems = stepProblems(SERVICES, step, "test/support/fixtureWorkflows.ts");
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return step;
}

/** A fixture workflow of `stepCount` steps, named `fixture<stepCount>`, version 1. */
export function fixtureWorkflow(stepCount: number): WorkflowDefinition {
  return Object.freeze({
    name: `fixture${stepCount}`,
    version: 1,
    steps: Object.freeze(Array.from({ length: stepCount }, (_, i) => fixtureStep(i))),
  });
}

export const FIXTURE_2 = fixtureWorkflow(2);
export const FIXTURE_3 = fixtureWorkflow(3);
export const FIXTURE_5 = fixtureWorkflow(5);

/** The sizes the engine's tests run on: the shortest with an undo before the last step, a middle one, a longer one. */
export const FIXTURE_WORKFLOWS: readonly WorkflowDefinition[] = [FIXTURE_2, FIXTURE_3, FIXTURE_5];

/** The workflow the record builders of ./domain use unless told otherwise. */
export const DEFAULT_FIXTURE = FIXTURE_3;
