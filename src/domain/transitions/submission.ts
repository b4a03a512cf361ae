import { orderFingerprint, type Order } from "../order";
import type { StateRecord } from "../stateRecord";
import { hasUndo, type WorkflowDefinition } from "../workflow";
import { refuse, unchanged, type TransitionResult } from "./result";

export interface SubmitContext {
  now: Date;
  workflow: WorkflowDefinition;
  /** The submission's trace, which the order's every later span joins (null: none). */
  traceparent?: string | null;
}

/** The initial state record of a new order: Pending, unlocked, no failures, every step not started. */
export function submit(order: Order, ctx: SubmitContext): StateRecord {
  const at = ctx.now.toISOString();
  return {
    id: order.orderId,
    orderId: order.orderId,
    workflow: { name: ctx.workflow.name, version: ctx.workflow.version },
    processState: "Pending",
    lockedBy: null,
    admissionShard: null,
    completeBy: null,
    retryAt: null,
    failureCount: 0,
    compensationFailureCount: 0,
    parkedSince: null,
    attempt: 0,
    steps: ctx.workflow.steps.map((s) => ({
      name: s.name,
      agent: s.agent,
      status: "Pending",
      completeBy: null,
      dispatchedAt: null,
      dispatchedInAttempt: null,
      requestId: null,
      completedAt: null,
      result: null,
      compensation: null,
      lastError: null,
      undoable: hasUndo(s),
      undo: null,
    })),
    replyTo: order.replyTo ?? null,
    fingerprint: orderFingerprint(order),
    lastError: null,
    compensationRequest: null,
    alert: null,
    traceparent: ctx.traceparent ?? null,
    history: [{ at, event: "submitted", by: "submission", from: null, to: "Pending", attempt: 0 }],
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * A resubmission of a known orderId: a no-op when the immutable data matches, a conflict otherwise. Never an
 * overwrite, whatever state the record is in.
 */
export function acceptResubmission(existing: StateRecord, order: Order): TransitionResult {
  const fingerprint = orderFingerprint(order);
  if (fingerprint !== existing.fingerprint) {
    return refuse(
      existing,
      "acceptResubmission",
      "OrderConflict",
      `order ${order.orderId} was already submitted with different data (stored ${existing.fingerprint}, received ${fingerprint})`,
    );
  }
  return unchanged(existing);
}
