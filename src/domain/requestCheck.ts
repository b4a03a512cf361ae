import { agentRequestId, idempotencyKeyFor, type StepKind } from "./ids";
import { quoteValue } from "./validation";
import type { AgentRequest } from "./messages";
import { jsonEqual } from "./jsonEqual";
import type { Order } from "./order";
import { neverDispatched } from "./replyCheck";
import type { StateRecord } from "./stateRecord";
import { hasUndo, type AgentName, type StepDefinition, type WorkflowDefinition } from "./workflow";

/** The operation and body of a step's request (`do`) or of its undo's. */
function payloadOf(
  definition: StepDefinition,
  kind: StepKind,
  order: Order,
  compensation: Record<string, unknown> | null,
): { operation: string; body: Record<string, unknown> } {
  if (kind === "do") return { operation: definition.doOperation, body: definition.doRequest(order) };
  // Compensation passes a step without undo (nextUndoIndex), so no record shows the undo of one dispatched.
  if (!hasUndo(definition)) throw new Error(`step ${definition.name} declares no undo`);
  return { operation: definition.undoOperation, body: definition.undoRequest(order, compensation) };
}

/**
 * The request the Scheduler sends for the dispatch of step `stepIndex` in direction `kind` that the record shows
 * (written just before, by the attempt `instanceId`): the body from the immutable order and, for an undo, the
 * compensation recorded with the step's success. The dispatcher sends it, and an agent compares what it received
 * with it, so both are this one function.
 */
export function dispatchedRequest(
  record: StateRecord,
  definition: StepDefinition,
  order: Order,
  address: { instanceId: string; stepIndex: number; kind: StepKind },
): AgentRequest {
  const { instanceId, stepIndex, kind } = address;
  const step = record.steps[stepIndex]!;
  const forward = kind === "do";
  return {
    // The id the transition recorded. (A step dispatched by a build that did not record one has none.)
    requestId:
      (forward ? step.requestId : (step.undo?.requestId ?? null)) ??
      agentRequestId(instanceId, stepIndex, kind),
    orderId: record.orderId,
    instanceId,
    stepIndex,
    step: definition.name,
    kind,
    payload: payloadOf(
      definition,
      kind,
      order,
      (step.compensation as Record<string, unknown> | null) ?? null,
    ),
    completeBy: forward ? step.completeBy! : step.undo!.completeBy,
    idempotencyKey: idempotencyKeyFor(record.orderId, definition.name, kind),
  };
}

/**
 * What an agent makes of a schema-valid request, measured against its order's state record:
 * - `current`: it is the dispatch the record shows in progress now (the attempt holds the record, the step or its
 *   undo is Dispatched under this request's id): the agent may act, on what the record says (`definition`);
 * - `stale`: it was dispatched, but the record has moved on (answered, the attempt over or ended early, a workflow
 *   version this build lacks): a late or redelivered request from the Scheduler. Drop it, quietly;
 * - `unknown`: the Scheduler never dispatched it (an order that does not exist, an attempt or step it never sent,
 *   a step that is another agent's or named otherwise). Someone else wrote it: refuse it and alert.
 * The rule is the reply router's (`neverDispatched`): "was it ever sent" is asked before "is it still wanted", so
 * an attempt being over never hides a forgery, and a late request never raises an alarm.
 */
export type RequestVerdict =
  | { verdict: "current"; definition: StepDefinition; deadline: string }
  | { verdict: "stale"; reason: string }
  | { verdict: "unknown"; reason: string };

export function checkRequest(
  record: StateRecord | undefined,
  workflow: WorkflowDefinition | undefined,
  agent: AgentName,
  request: AgentRequest,
): RequestVerdict {
  const label = `step ${request.stepIndex} ${request.kind} of ${request.instanceId}`;
  if (!record) return { verdict: "unknown", reason: `${label}: order ${request.orderId} does not exist` };
  const never = neverDispatched(record, request);
  if (never) return { verdict: "unknown", reason: never };
  if (!workflow) {
    const { name, version } = record.workflow;
    return { verdict: "stale", reason: `${label}: workflow ${name} v${version} is not in this build` };
  }
  const definition = workflow.steps[request.stepIndex];
  if (definition?.agent !== agent)
    return {
      verdict: "unknown",
      reason: `${label}: the step is ${definition ? `${definition.agent}'s` : "not in the workflow"}, not ${agent}'s`,
    };
  if (definition.name !== request.step)
    return {
      verdict: "unknown",
      reason: `${label}: step: expected ${quoteValue(definition.name)}, got ${quoteValue(request.step)}`,
    };
  const step = record.steps[request.stepIndex]!;
  const forward = request.kind === "do";
  const dispatch = forward
    ? { status: step.status, requestId: step.requestId, completeBy: step.completeBy }
    : {
        status: step.undo?.status,
        requestId: step.undo?.requestId ?? null,
        completeBy: step.undo?.completeBy ?? null,
      };
  const inProgress =
    record.lockedBy === request.instanceId &&
    record.processState === (forward ? "Processing" : "Compensating") &&
    dispatch.status === "Dispatched" &&
    dispatch.requestId === request.requestId;
  if (!inProgress)
    return {
      verdict: "stale",
      reason:
        `${label}: no longer in progress (${record.processState}, held by ${record.lockedBy ?? "nobody"}, ` +
        `${step.name} ${request.kind} ${dispatch.status ?? "not dispatched"} as ${dispatch.requestId ?? "none"})`,
    };
  // The attempt's deadline as the record has it now: the step's, or earlier once the attempt ended early.
  return { verdict: "current", definition, deadline: (record.completeBy ?? dispatch.completeBy)! };
}

/**
 * Where a request differs from the one the Scheduler dispatched (`dispatchedRequest`), or undefined when it is that
 * request. Bodies are compared as JSON documents, as they travelled, whatever the order of their keys; neither is
 * echoed.
 */
export function requestMismatch(received: AgentRequest, dispatched: AgentRequest): string | undefined {
  const label = `step ${received.stepIndex} ${received.kind} of ${received.instanceId}`;
  if (received.payload.operation !== dispatched.payload.operation)
    return `${label}: payload.operation: expected ${quoteValue(dispatched.payload.operation)}, got ${quoteValue(received.payload.operation)}`;
  if (!jsonEqual(received.payload.body, dispatched.payload.body))
    return `${label}: payload.body differs from the body the Scheduler dispatched`;
  if (received.completeBy !== dispatched.completeBy)
    return `${label}: completeBy: expected ${dispatched.completeBy}, got ${quoteValue(received.completeBy)}`;
  return undefined;
}
