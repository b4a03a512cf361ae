import { instanceIdFor } from "../ids";
import { nextStepIndex, nextUndoIndex, type StateRecord } from "../stateRecord";
import { compensationStepDispatched } from "./compensation";
import { addSeconds, andThen, commit, refuse, type TransitionResult } from "./result";
import { stepDispatched } from "./steps";

export interface ClaimContext {
  now: Date;
  /**
   * Deadline for the claimed attempt to show progress. The orchestration replaces it with each step's deadline;
   * if the start is lost (crash between claim and startNew), the Supervisor finds it expired and recovers it.
   */
  claimTimeoutSeconds: number;
  /** The admission shard where the claimer took the attempt's place; omitted by claims made without one. */
  admissionShard?: number;
}

/**
 * The lockedBy a claim of `record` writes: its next attempt's orchestration instance id. An admission place is
 * taken under this name before the claim, and the check of a place compares it with the record's lockedBy.
 */
export const claimedBy = (record: StateRecord): string => instanceIdFor(record.orderId, record.attempt + 1);

/**
 * The starter's claim: Pending → Processing, CompensationPending → Compensating, with attempt+1 and
 * lockedBy = the new attempt's orchestration instance id. Written with IfMatch, so two starters cannot both win.
 */
export function claim(record: StateRecord, ctx: ClaimContext): TransitionResult {
  const target =
    record.processState === "Pending"
      ? "Processing"
      : record.processState === "CompensationPending"
        ? "Compensating"
        : null;
  if (target === null) {
    return refuse(record, "claim", "WrongState", `only Pending or CompensationPending records are claimed`);
  }
  if (record.lockedBy !== null) {
    return refuse(record, "claim", "NotLockHolder", `record is still locked by ${record.lockedBy}`);
  }
  if (record.retryAt !== null && record.retryAt > ctx.now.toISOString()) {
    return refuse(record, "claim", "NotDue", `record is not due before ${record.retryAt}`);
  }
  const attempt = record.attempt + 1;
  const lockedBy = claimedBy(record);
  return commit(record, ctx.now, { event: "claimed", by: "starter", detail: lockedBy }, (draft) => {
    draft.processState = target;
    draft.attempt = attempt;
    draft.lockedBy = lockedBy;
    draft.admissionShard = ctx.admissionShard ?? null;
    draft.completeBy = addSeconds(ctx.now, ctx.claimTimeoutSeconds);
    draft.retryAt = null;
  });
}

/**
 * The claim and the attempt's first dispatch in one write: the starter records the request it is about to send,
 * so that the attempt's first move costs no activity and no write of its own. When the claimed record has nothing
 * left to call (a compensation whose undos are all done), this is the claim alone, and the orchestration finishes
 * the order as it does after any claim.
 */
export function claimAndDispatch(
  record: StateRecord,
  ctx: ClaimContext & { stepTimeoutSeconds: number },
): TransitionResult {
  return andThen(claim(record, ctx), (claimed) => {
    const forward = claimed.processState === "Processing";
    const stepIndex = forward ? nextStepIndex(claimed) : nextUndoIndex(claimed);
    if (stepIndex === -1)
      return refuse(claimed, "claimAndDispatch", "StepsIncomplete", "nothing to dispatch");
    const dispatch = {
      now: ctx.now,
      lockedBy: claimed.lockedBy!,
      stepIndex,
      stepTimeoutSeconds: ctx.stepTimeoutSeconds,
    };
    return forward ? stepDispatched(claimed, dispatch) : compensationStepDispatched(claimed, dispatch);
  });
}
