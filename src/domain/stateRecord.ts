import { z } from "zod";
import { traceparentSchema } from "./traceContext";
import { isoTimestamp } from "./validation";
import { agentNameSchema, workflowRefSchema } from "./workflow";

/** Every processState (docs/contract.md#states). */
export const PROCESS_STATES = [
  "Pending",
  "Processing",
  "Processed",
  "CompensationPending",
  "Compensating",
  "Compensated",
  "CompensationFailed",
  "Error",
] as const;
export const processStateSchema = z.enum(PROCESS_STATES);
export type ProcessState = z.infer<typeof processStateSchema>;

/** States that only an operator action may leave (Processed and Compensated are left by nobody). */
export const TERMINAL_STATES: readonly ProcessState[] = [
  "Processed",
  "Compensated",
  "CompensationFailed",
  "Error",
];
/** States in which an orchestration holds the record: exactly these carry lockedBy and completeBy. */
export const LOCKED_STATES: readonly ProcessState[] = ["Processing", "Compensating"];
/** States the starter claims from. */
export const CLAIMABLE_STATES: readonly ProcessState[] = ["Pending", "CompensationPending"];

export const isTerminal = (state: ProcessState): boolean => TERMINAL_STATES.includes(state);
export const isLocked = (state: ProcessState): boolean => LOCKED_STATES.includes(state);

/**
 * Status of a step's forward action. `Dispatched` doubles as "in doubt": a request went out and no decisive answer
 * came back (timeout, lost reply, transient error), so the remote effect may or may not exist.
 */
export const STEP_STATUSES = ["Pending", "Dispatched", "Succeeded", "Failed"] as const;
export const stepStatusSchema = z.enum(STEP_STATUSES);
export type StepStatus = z.infer<typeof stepStatusSchema>;

export const UNDO_STATUSES = ["Dispatched", "Succeeded", "Failed"] as const;
export const undoStatusSchema = z.enum(UNDO_STATUSES);
export type UndoStatus = z.infer<typeof undoStatusSchema>;

export const errorInfoSchema = z.strictObject({
  code: z.string().min(1),
  message: z.string(),
  at: isoTimestamp,
});
export type ErrorInfo = z.infer<typeof errorInfoSchema>;

/**
 * The MessageId of the request last dispatched for a step or its undo: a reply is accepted only for exactly that
 * request. Records written before it was kept have none, which refuses their replies until a new attempt.
 */
const requestIdField = z.string().min(1).nullable().default(null);

export const undoSchema = z.strictObject({
  status: undoStatusSchema,
  requestId: requestIdField,
  dispatchedAt: isoTimestamp,
  dispatchedInAttempt: z.number().int().nonnegative(),
  completeBy: isoTimestamp,
  completedAt: isoTimestamp.nullable(),
  result: z.unknown().nullable(),
  lastError: errorInfoSchema.nullable(),
});
export type UndoState = z.infer<typeof undoSchema>;

export const stepSchema = z.strictObject({
  name: z.string().min(1),
  agent: agentNameSchema,
  status: stepStatusSchema,
  /** Deadline of the current forward dispatch. */
  completeBy: isoTimestamp.nullable(),
  dispatchedAt: isoTimestamp.nullable(),
  /** Attempt that last dispatched the step: a re-run of the same attempt's dispatch is a no-op. */
  dispatchedInAttempt: z.number().int().nonnegative().nullable(),
  requestId: requestIdField,
  completedAt: isoTimestamp.nullable(),
  /** What the remote service answered (e.g. a chargeId). */
  result: z.unknown().nullable(),
  /** What the undo needs (e.g. the chargeId to refund): recorded with the success, durable before the next step. */
  compensation: z.unknown().nullable(),
  lastError: errorInfoSchema.nullable(),
  /**
   * Whether the step declares an undo (its workflow's definition, copied at submission). Compensation passes a
   * step without one. Records written before steps could lack an undo have none, and every step of theirs has one.
   */
  undoable: z.boolean().default(true),
  undo: undoSchema.nullable(),
});
export type Step = z.infer<typeof stepSchema>;

export const ACTORS = ["submission", "starter", "scheduler", "supervisor", "operator"] as const;
export type Actor = (typeof ACTORS)[number];

export const historyEntrySchema = z.strictObject({
  at: isoTimestamp,
  event: z.string().min(1),
  by: z.string().min(1),
  from: processStateSchema.nullable(),
  to: processStateSchema,
  attempt: z.number().int().nonnegative(),
  detail: z.string().optional(),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** Bound on the embedded audit trail: a record must stay far below Cosmos DB's 2 MB item limit. */
export const HISTORY_LIMIT = 50;

/**
 * The operator alert a transition decided (Error, CompensationFailed), written in the same conditional write as the
 * state it announces, and marked sent once it is on the `alerts` queue. A process that dies between the two leaves
 * it unsent; the Supervisor's sweep sends it then, under the same MessageId, which the queue's duplicate detection
 * keeps to one message even when the first send did get through.
 */
export const decidedAlertSchema = z.strictObject({
  kind: z.enum(["Error", "CompensationFailed"]),
  reason: z.string(),
  messageId: z.string().min(1),
  decidedAt: isoTimestamp,
  sentAt: isoTimestamp.nullable(),
});
export type DecidedAlert = z.infer<typeof decidedAlertSchema>;

export const compensationRequestSchema = z.strictObject({
  reason: z.string(),
  requestedBy: z.string(),
  at: isoTimestamp,
});

/**
 * One record per order in the state store. Field names are contract (docs/contract.md#data). Cosmos system properties
 * (`_etag`, `_ts`, ...) are kept through a read-modify-write, hence the loose object.
 */
export const stateRecordSchema = z.looseObject({
  id: z.string().min(1),
  orderId: z.string().min(1),
  workflow: workflowRefSchema,
  processState: processStateSchema,
  lockedBy: z.string().min(1).nullable(),
  /**
   * The admission shard whose place the attempt holding the record took (src/domain/admission.ts); null when no
   * attempt holds it, or for a claim made without one (before admission had shards).
   */
  admissionShard: z.number().int().nonnegative().nullable().default(null),
  completeBy: isoTimestamp.nullable(),
  retryAt: isoTimestamp.nullable(),
  failureCount: z.number().int().nonnegative(),
  /** The Supervisor's count for compensation attempts, kept apart so that undo gets its own full budget. */
  compensationFailureCount: z.number().int().nonnegative(),
  attempt: z.number().int().nonnegative(),
  steps: z.array(stepSchema).min(1),
  replyTo: z.string().nullable(),
  fingerprint: z.string().min(1),
  lastError: errorInfoSchema.nullable(),
  compensationRequest: compensationRequestSchema.nullable(),
  /**
   * When the order was first parked or deferred because a service it needs was unavailable (its breaker open);
   * null once a step succeeds again. An order waiting longer than OUTAGE_MAX_SECONDS counts its failures again.
   */
  parkedSince: isoTimestamp.nullable().default(null),
  /** The last alert a transition decided; null until one is. */
  alert: decidedAlertSchema.nullable().default(null),
  /**
   * The order's trace (W3C traceparent of its submission): every attempt, the Supervisor's decisions and the
   * agents' calls join it, so one order is one trace. Null for an order submitted while tracing was off.
   */
  traceparent: traceparentSchema.nullable().default(null),
  history: z.array(historyEntrySchema).max(HISTORY_LIMIT),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
  _etag: z.string().optional(),
});
export type StateRecord = z.infer<typeof stateRecordSchema>;

/** Index of the next forward step to run, or -1 when every step has succeeded. */
export function nextStepIndex(record: StateRecord): number {
  return record.steps.findIndex((s) => s.status !== "Succeeded");
}

/** A step whose forward effect may exist: it succeeded, or it was dispatched and never decisively answered. */
export function mayHaveEffect(step: Step): boolean {
  return step.status === "Succeeded" || step.status === "Dispatched";
}

/** A step compensation must undo: it may have had an effect, and it declares an undo to take it back. */
export function needsUndo(step: Step): boolean {
  return step.undoable && mayHaveEffect(step);
}

/**
 * Index of the next step to undo, or -1 when compensation is complete. Steps run one at a time, so undoing from
 * the highest index down is undoing in reverse completion order.
 */
export function nextUndoIndex(record: StateRecord): number {
  for (let i = record.steps.length - 1; i >= 0; i--) {
    const step = record.steps[i]!;
    if (needsUndo(step) && step.undo?.status !== "Succeeded") return i;
  }
  return -1;
}

/** States in which compensation has begun: it has passed every step above nextUndoIndex. */
const COMPENSATION_STATES: readonly ProcessState[] = [
  "CompensationPending",
  "Compensating",
  "Compensated",
  "CompensationFailed",
];

/** How far down compensation has come: the next step to undo (-1 when done), or past the last step before it began. */
function compensationAt(record: StateRecord): number {
  return COMPENSATION_STATES.includes(record.processState) ? nextUndoIndex(record) : record.steps.length;
}

/**
 * The steps without undo that compensation moves past from `before` to `after` (one transition), highest first:
 * those it reached (not Pending: succeeded, refused or in doubt) between where it was and where it is now. It moves
 * past one when it begins (the refusal or the cancel) or when the undo of the step above it is done, and past
 * each only once, so the audit trail records each in the write that passes it.
 */
export function stepsPassedWithoutUndo(before: StateRecord, after: StateRecord): number[] {
  const passed: number[] = [];
  for (let i = compensationAt(before) - 1; i > compensationAt(after); i--) {
    const step = after.steps[i]!;
    if (!step.undoable && step.status !== "Pending") passed.push(i);
  }
  return passed;
}
