/**
 * The rules a process declaration (src/domain/process.ts) must follow, and the names everything else derives from a
 * service's name: its request queue, its URL setting and its agent function. Queues, settings, function names,
 * infra/process.json, Bicep and the docs all use these functions, so a service is named in one place only.
 */

/** What the process declares of one remote service. */
export interface ServiceDeclaration {
  /** One line on what the service does for the process, for the docs and the dashboard. */
  readonly summary: string;
  /** Its remote operations, each the do or the undo of some step (the route /<service>/<operation>). */
  readonly operations: readonly string[];
}

/**
 * A service's name: lowercase letters only, since it is spelt as is in the queue (`inventory-requests`), upper-cased
 * in the setting (`INVENTORY_URL`) and followed by `Agent` in the function name (`inventoryAgent`).
 */
export const SERVICE_NAME = /^[a-z]+$/;
/** A remote operation's name, as it appears in the route /<service>/<operation>. */
export const OPERATION_NAME = /^[a-z][a-zA-Z]*$/;

/** Service Bus queue an agent listens on. */
export function agentRequestQueue<S extends string>(service: S): `${S}-requests` {
  return `${service}-requests`;
}

/** App setting holding the service's base URL. */
export function serviceUrlSetting<S extends string>(service: S): `${Uppercase<S>}_URL` {
  return `${service.toUpperCase() as Uppercase<S>}_URL`;
}

/** Name of the function that runs the service's agent (Flex Consumption scales it as `function:<name>`). */
export function agentFunctionName<S extends string>(service: S): `${S}Agent` {
  return `${service}Agent`;
}

/**
 * What checkProcess reads of a step: the service it calls, its operations, and which parts of an undo it declares
 * (a step declares all three, or none: src/domain/workflow.ts).
 */
export interface StepUse {
  readonly name: string;
  readonly agent: string;
  readonly doOperation: string;
  readonly undoOperation?: string | undefined;
  readonly compensationFrom?: unknown;
  readonly undoRequest?: unknown;
}

/** The parts an undo is declared with: a step declares all of them, or none. */
const UNDO_PARTS = ["undoOperation", "compensationFrom", "undoRequest"] as const;

/** The step's operations: its do, and its undo if it declares one. */
const operationsOf = (step: StepUse): string[] =>
  step.undoOperation === undefined ? [step.doOperation] : [step.doOperation, step.undoOperation];

/** A step that declares part of an undo but not all of it: what to add, or what to remove for a step without undo. */
function partialUndo(step: StepUse, where: string): string[] {
  const declared = UNDO_PARTS.filter((part) => step[part] !== undefined);
  if (declared.length === 0 || declared.length === UNDO_PARTS.length) return [];
  const missing = UNDO_PARTS.filter((part) => step[part] === undefined);
  return [
    `${where}: step ${step.name} declares ${declared.join(", ")} but not ${missing.join(", ")}: add ${missing.join(" and ")} for a step that is undone, or remove ${declared.join(" and ")} for a step without undo`,
  ];
}

/** Problems of one step against the declared services: each names the step and what to fix. */
export function stepProblems(
  services: Readonly<Record<string, ServiceDeclaration>>,
  step: StepUse,
  where: string,
): string[] {
  const partial = partialUndo(step, where);
  const service = Object.hasOwn(services, step.agent) ? services[step.agent] : undefined;
  if (!service) {
    return [
      ...partial,
      `${where}: step ${step.name} calls service "${step.agent}", which SERVICES in src/domain/process.ts does not declare (declared: ${Object.keys(services).join(", ")})`,
    ];
  }
  return [
    ...partial,
    ...operationsOf(step)
      .filter((operation) => !service.operations.includes(operation))
      .map(
        (operation) =>
          `${where}: step ${step.name} calls ${step.agent}/${operation}, an operation SERVICES.${step.agent}.operations in src/domain/process.ts does not declare (declared: ${service.operations.join(", ")})`,
      ),
  ];
}

/**
 * Everything wrong with a declaration, in words that say where to fix it; empty when it is sound. Both directions:
 * every step calls a declared service and operation, and every declared service and operation is called by a step
 * (an unused one would get a queue, a function and a setting that nothing ever uses).
 */
export function checkProcess(
  services: Readonly<Record<string, ServiceDeclaration>>,
  steps: readonly StepUse[],
): string[] {
  const where = "src/domain/process.ts";
  const problems: string[] = [];
  if (Object.keys(services).length === 0) problems.push(`${where}: SERVICES declares no service`);
  for (const [name, service] of Object.entries(services)) {
    if (!SERVICE_NAME.test(name)) {
      problems.push(
        `${where}: service "${name}" must be lowercase letters only (it names ${agentRequestQueue(name)}, ${serviceUrlSetting(name)}, ${agentFunctionName(name)})`,
      );
    }
    if (service.summary.trim() === "") problems.push(`${where}: service ${name} has no summary`);
    if (service.operations.length === 0) problems.push(`${where}: service ${name} declares no operation`);
    for (const operation of service.operations) {
      if (!OPERATION_NAME.test(operation)) {
        problems.push(
          `${where}: operation ${name}/${operation} must be a lowercase letter followed by letters, such as charge`,
        );
      }
    }
    if (new Set(service.operations).size !== service.operations.length) {
      problems.push(`${where}: service ${name} declares an operation twice`);
    }
    const used = steps.filter((s) => s.agent === name);
    if (used.length === 0) {
      problems.push(`${where}: service ${name} is declared but no step of ORDER_WORKFLOWS calls it`);
      continue;
    }
    for (const operation of service.operations) {
      if (!used.some((s) => operationsOf(s).includes(operation))) {
        problems.push(`${where}: operation ${name}/${operation} is declared but no step calls it`);
      }
    }
  }
  for (const step of steps) problems.push(...stepProblems(services, step, where));
  return problems;
}
