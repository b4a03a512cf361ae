import { z } from "zod";
import {
  SERVICES,
  agentNameSchema,
  defaultWorkflows,
  stepProblems,
  validate,
  workflowRefSchema,
  type WorkflowDefinition,
  type WorkflowRegistry,
} from "../domain";

/**
 * The workflow versions of this process: the built-in ones plus those an app entry registers at start-up (see
 * docs/architecture.md#versioning). Registration closes when the app first builds its dependencies, so every
 * invocation of a process sees the same versions, and instances of one deployment agree as long as they load
 * the same entry.
 */
let registry: WorkflowRegistry | undefined;
let inUse = false;

const operationName = z
  .string()
  .regex(/^[a-z][a-zA-Z]*$/, { error: "expected a remote operation name such as charge" });
const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", {
    error: `expected a function (${what})`,
  });

/** Plain-JavaScript app entries register too, so the shape is checked here rather than left to the agents. */
const definitionSchema = workflowRefSchema.extend({
  steps: z
    .array(
      z.object({
        name: z.string().min(1),
        agent: agentNameSchema,
        doOperation: operationName,
        doRequest: fn("order → request body"),
        // A step's undo is all three or none (a step without undo); stepProblems below names a partial one.
        undoOperation: operationName.optional(),
        compensationFrom: fn("result → compensation data").optional(),
        undoRequest: fn("order, compensation → undo body").optional(),
      }),
    )
    .min(1),
});

function processRegistry(): WorkflowRegistry {
  registry ??= defaultWorkflows();
  return registry;
}

/**
 * Registers another version of a workflow beside the built-in ones. Call it from the app entry before the host
 * runs any function; new orders then start on the newest version of their workflow, while a record keeps the
 * version it started on. Throws when the definition is malformed, the version is already registered, or the app
 * has already started.
 */
export function registerWorkflow(definition: WorkflowDefinition): void {
  const checked = validate(definitionSchema, definition);
  if (!checked.ok) throw new Error(`registerWorkflow: invalid workflow definition: ${checked.message}`);
  // A step may call only what the process declares: a queue, an agent and a simulator route exist for nothing else.
  const where = `registerWorkflow(${definition.name} v${definition.version})`;
  const problems = definition.steps.flatMap((step) => stepProblems(SERVICES, step, where));
  if (problems.length > 0) throw new Error(problems.join("; "));
  if (inUse) {
    throw new Error(
      `registerWorkflow(${definition.name} v${definition.version}): workflows must be registered at start-up, ` +
        `before the first function runs`,
    );
  }
  processRegistry().register(definition);
}

/** The registry the deployed app uses; taking it closes registration. */
export function appWorkflows(): WorkflowRegistry {
  inUse = true;
  return processRegistry();
}
