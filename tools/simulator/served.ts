// What the simulator serves: every service and operation of the process declaration (src/domain/process.ts),
// each operation a do or an undo as the workflow's steps use it. Nothing here names a service, so a service a
// fork declares is served without a line written here; its rules, if any, go in ./behaviours.ts.
import { AGENT_NAMES, SERVICES as DECLARED, orderWorkflowV1, type AgentName } from "../../src/domain";

/** Whether an operation applies an effect (a step's do) or reverses the order's effects (its undo). */
export type Role = "do" | "undo";
/** The services a simulator serves: service → operation → role. Each key is a route /<service>/<operation>. */
export type ServedServices = Readonly<Record<string, Readonly<Record<string, Role>>>>;

/** A declared service's name. */
export type Service = AgentName;
/** The declared services, in declaration order (fault specs and the soak's fault plan name them). */
export const SERVICES: readonly Service[] = AGENT_NAMES;

// The declaration lists a service's operations; the steps say which undoes which (checkProcess, which runs as
// src/domain/process.ts loads, guarantees every declared operation is some step's do or undo).
const roleOf = (service: string, operation: string): Role =>
  orderWorkflowV1.steps.some((s) => s.agent === service && s.doOperation === operation) ? "do" : "undo";

/** What startSimulator serves unless told otherwise: the declaration. */
export const DECLARED_SERVICES: ServedServices = Object.fromEntries(
  SERVICES.map((s) => [s, Object.fromEntries(DECLARED[s].operations.map((op) => [op, roleOf(s, op)]))]),
);

/** The do and undo of each declared service's step, for the soak's fault plan; undo null for a step without one. */
export const OPERATIONS = Object.fromEntries(
  orderWorkflowV1.steps.map((s) => [s.agent, { do: s.doOperation, undo: s.undoOperation ?? null }]),
) as Record<Service, { do: string; undo: string | null }>;

/** The routes of `services`, as "<service>/<operation>". */
export function routesOf(services: ServedServices): string[] {
  return Object.entries(services).flatMap(([s, ops]) => Object.keys(ops).map((op) => `${s}/${op}`));
}
