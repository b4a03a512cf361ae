import { boundedText, MAX_REASON_LENGTH } from "../validation";
import {
  HISTORY_LIMIT,
  stepsPassedWithoutUndo,
  type Actor,
  type DecidedAlert,
  type HistoryEntry,
  type ProcessState,
  type StateRecord,
} from "../stateRecord";

export const REFUSAL_CODES = [
  /** The record is in a state this transition does not start from. */
  "WrongState",
  /** Fencing: the caller's instance id is not the record's lockedBy (an expired or replaced attempt). */
  "NotLockHolder",
  /** The record is not due yet (retryAt in the future). */
  "NotDue",
  /** The Supervisor found completeBy still in the future. */
  "NotExpired",
  /** The step named is not the one the workflow is at, or is not in a status this transition accepts. */
  "StepOutOfOrder",
  /** Not every step is done yet. */
  "StepsIncomplete",
  /** A resubmission whose immutable data differs from the stored order. */
  "OrderConflict",
  /** Compensation was already requested or is running. */
  "AlreadyCompensating",
  /** A reply that answers no request the record shows for its attempt, step and direction. */
  "UnknownRequest",
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

export interface Refusal {
  code: RefusalCode;
  transition: string;
  orderId: string;
  processState: ProcessState;
  reason: string;
}

/**
 * What every transition returns. `changed: false` marks an idempotent repeat (a re-run activity, a duplicate
 * reply): the adapter has nothing to write.
 */
export type TransitionResult =
  { ok: true; record: StateRecord; changed: boolean } | { ok: false; refusal: Refusal };

export function refuse(
  record: StateRecord,
  transition: string,
  code: RefusalCode,
  reason: string,
): TransitionResult {
  return {
    ok: false,
    refusal: { code, transition, orderId: record.orderId, processState: record.processState, reason },
  };
}

export function unchanged(record: StateRecord): TransitionResult {
  return { ok: true, record, changed: false };
}

/**
 * Two transitions written as one: `next` applied to the record `first` produced, so that one conditional write
 * records both (each with its own history entry). When `first` writes nothing, or `next` refuses, the answer is
 * `first`'s alone: the second move is then left to its own write, as if they had never been joined.
 */
export function andThen(
  first: TransitionResult,
  next: (record: StateRecord) => TransitionResult,
): TransitionResult {
  if (!first.ok || !first.changed) return first;
  const second = next(first.record);
  return second.ok ? { ok: true, record: second.record, changed: true } : first;
}

export interface HistoryNote {
  event: string;
  by: Actor | string;
  detail?: string;
}

/**
 * A deep copy of plain data (objects, arrays and primitives, as a record read from the store or built by the
 * transitions is, never a Date or a Map): several times faster than structuredClone for a record of a few KB,
 * which every transition copies.
 */
export function copyPlain<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyPlain) as T;
  if (value === null || typeof value !== "object") return value;
  const source = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) copy[key] = copyPlain(source[key]);
  return copy as T;
}

/** The history event that records compensation passing a step without undo (see stepsPassedWithoutUndo). */
export const COMPENSATION_STEP_SKIPPED = "compensationStepSkipped";

/**
 * Returns the new record: `update` applied to a deep copy (inputs are never mutated, so a caller holding the
 * old copy still sees what it read), with updatedAt and a bounded history entry. The history's entries are the
 * one part not copied: written once and never changed, they are shared with the old record, in a new array.
 * When the write moves compensation past steps without undo, an entry for each follows the transition's own, so
 * that the trail of a compensated order reads every step it reached, whichever transition passed them.
 */
export function commit(
  record: StateRecord,
  now: Date,
  note: HistoryNote,
  update: (draft: StateRecord) => void,
): TransitionResult {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record))
    copy[key] = key === "history" ? [...(value as HistoryEntry[])] : copyPlain(value);
  const draft = copy as unknown as StateRecord;
  update(draft);
  const at = now.toISOString();
  draft.updatedAt = at;
  const entry: HistoryEntry = {
    at,
    event: note.event,
    by: note.by,
    from: record.processState,
    to: draft.processState,
    attempt: draft.attempt,
    ...(note.detail !== undefined ? { detail: note.detail } : {}),
  };
  const skipped: HistoryEntry[] = stepsPassedWithoutUndo(record, draft).map((i) => ({
    at,
    event: COMPENSATION_STEP_SKIPPED,
    by: note.by,
    from: draft.processState,
    to: draft.processState,
    attempt: draft.attempt,
    detail: `${draft.steps[i]!.name}: no undo declared`,
  }));
  draft.history = [...draft.history, entry, ...skipped].slice(-HISTORY_LIMIT);
  return { ok: true, record: draft, changed: true };
}

/** Fencing check shared by every write an orchestration makes. */
export function checkFence(
  record: StateRecord,
  transition: string,
  lockedBy: string,
): TransitionResult | null {
  if (record.lockedBy !== lockedBy) {
    return refuse(
      record,
      transition,
      "NotLockHolder",
      `record is held by ${record.lockedBy ?? "nobody"}, not by ${lockedBy}`,
    );
  }
  return null;
}

export function addSeconds(now: Date, seconds: number): string {
  return new Date(now.getTime() + seconds * 1000).toISOString();
}

/**
 * Records the alert a transition decides, in the same write as the state it announces: MessageId
 * `<orderId>:<attempt>:<kind>`, unique per decision (a retry moves to a new attempt first).
 */
export function decideAlert(draft: StateRecord, kind: DecidedAlert["kind"], reason: string, now: Date): void {
  draft.alert = {
    kind,
    reason: boundedText(reason, MAX_REASON_LENGTH),
    messageId: `${draft.orderId}:${draft.attempt}:${kind}`,
    decidedAt: now.toISOString(),
    sentAt: null,
  };
}

/** Clears the lock fields: they are set exactly while the record is Processing or Compensating. */
export function release(draft: StateRecord): void {
  draft.lockedBy = null;
  draft.admissionShard = null;
  draft.completeBy = null;
}
