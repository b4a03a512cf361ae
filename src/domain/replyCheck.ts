import { parseInstanceId, type StepKind } from "./ids";
import type { AgentReply } from "./messages";
import { needsUndo, type StateRecord } from "./stateRecord";

/** What names one request: the attempt that sent it, its step and its direction. */
export interface RequestAddress {
  instanceId: string;
  stepIndex: number;
  kind: StepKind;
}

/**
 * Why the record rules out that attempt `address.instanceId` ever dispatched that step in that direction, or
 * undefined when it may have. The record keeps only the last dispatch of each step and of its undo
 * (`dispatchedInAttempt`), and attempts only grow, so an attempt after that last one never dispatched it. One
 * before it did only if it had got that far: steps run in order and undos in reverse, so the step before (for an
 * undo, the undo after) must have been last dispatched by that attempt too. What is left (an attempt that got
 * that far but died before sending) the record cannot tell apart: it counts as dispatched, which is the safe
 * side for a stale message (nothing acts on it) and spares every late answer a false alarm.
 */
export function neverDispatched(record: StateRecord, address: RequestAddress): string | undefined {
  const label = `step ${address.stepIndex} ${address.kind} of ${address.instanceId}`;
  const attempt = parseInstanceId(address.instanceId)?.attempt ?? 0;
  if (attempt > record.attempt)
    return `${label}: attempt ${attempt} was never started (the order is at attempt ${record.attempt})`;
  const step = record.steps[address.stepIndex];
  if (!step) return `${label}: the order has ${record.steps.length} steps`;
  const forward = address.kind === "do";
  const last = forward ? step.dispatchedInAttempt : (step.undo?.dispatchedInAttempt ?? null);
  if (last === null || attempt > last) {
    const recorded = forward ? step.requestId : (step.undo?.requestId ?? null);
    return `${label}: no such request was dispatched (${step.name} ${address.kind} last dispatched as ${recorded ?? "none"})`;
  }
  if (attempt === last) return undefined;
  // An earlier attempt than the last dispatch: had it got as far as this step?
  let reached: boolean;
  if (forward) {
    // The step before succeeded in the attempt that dispatched it last (a success is never dispatched again).
    const previous = record.steps[address.stepIndex - 1];
    reached = !previous || (previous.dispatchedInAttempt !== null && previous.dispatchedInAttempt <= attempt);
  } else {
    const after = undoBefore(record, address.stepIndex);
    reached =
      step.dispatchedInAttempt !== null &&
      step.dispatchedInAttempt <= attempt &&
      after !== null &&
      after <= attempt;
  }
  return reached
    ? undefined
    : `${label}: no such request was dispatched (attempt ${attempt} had not reached ${step.name} ${address.kind})`;
}

/**
 * The attempt that last dispatched the undo an undo of step `index` waits for (the next step up that needs one:
 * it may have had an effect and declares an undo), 0 when there is none, null when that undo was never dispatched.
 */
function undoBefore(record: StateRecord, index: number): number | null {
  for (let i = index + 1; i < record.steps.length; i++) {
    const step = record.steps[i]!;
    if (needsUndo(step)) return step.undo?.dispatchedInAttempt ?? null;
  }
  return 0;
}

/**
 * What a schema-valid reply is, measured against the state record of its order:
 * - `current`: it answers the request the attempt holding the record dispatched for that step and direction
 *   (or repeats that answer): deliver it to the orchestration;
 * - `stale`: it answers a request that was dispatched, by an attempt that is over (the record moved on: a late
 *   or duplicate reply). Nothing may act on it, and nothing needs to: drop it;
 * - `unknown`: it answers no request the Scheduler dispatched (an attempt or step that never was, or an order that
 *   does not exist). It was not written by an agent of this app: refuse it and alert.
 * Whether the request was ever dispatched is asked first: an attempt being over says nothing about what it sent.
 */
export type ReplyVerdict =
  { verdict: "current" } | { verdict: "stale"; reason: string } | { verdict: "unknown"; reason: string };

export function checkReply(record: StateRecord | undefined, reply: AgentReply): ReplyVerdict {
  const label = `step ${reply.stepIndex} ${reply.kind} of ${reply.instanceId}`;
  if (!record) return { verdict: "unknown", reason: `${label}: order ${reply.orderId} does not exist` };
  const never = neverDispatched(record, reply);
  if (never) return { verdict: "unknown", reason: never };
  const attempt = parseInstanceId(reply.instanceId)?.attempt ?? 0;
  if (attempt < record.attempt) {
    return { verdict: "stale", reason: `${label}: attempt ${attempt} is over (now ${record.attempt})` };
  }
  // This attempt dispatched it last, under this id (a record written before ids were kept has none).
  const step = record.steps[reply.stepIndex]!;
  const recorded = reply.kind === "do" ? step.requestId : (step.undo?.requestId ?? null);
  if (recorded !== reply.requestId) {
    return {
      verdict: "unknown",
      reason: `${label}: no such request was dispatched (${step.name} ${reply.kind} last dispatched as ${recorded ?? "none"})`,
    };
  }
  if (record.lockedBy !== reply.instanceId) {
    return {
      verdict: "stale",
      reason: `${label}: the attempt no longer holds the order (${record.processState}, held by ${record.lockedBy ?? "nobody"})`,
    };
  }
  return { verdict: "current" };
}

/**
 * Whether the record holds a decisive answer (a success or a permanent failure) to the request `address` names,
 * recorded while its attempt held the order: the attempt has moved past that request. The reply path records an
 * answer before it tells the orchestration, so a step's timer can fire after its answer was recorded; the attempt
 * then goes on from the record instead of reporting a deadline that was met.
 */
export function answerRecorded(record: StateRecord, address: RequestAddress): boolean {
  const step = record.steps[address.stepIndex];
  if (!step) return false;
  const attempt = parseInstanceId(address.instanceId)?.attempt ?? 0;
  const forward = address.kind === "do";
  const status = forward ? step.status : step.undo?.status;
  const dispatchedIn = forward ? step.dispatchedInAttempt : step.undo?.dispatchedInAttempt;
  return dispatchedIn === attempt && (status === "Succeeded" || status === "Failed");
}

/**
 * Whether a current answer came after the step's deadline: the record still awaits it (the attempt's completeBy is
 * the step's) and completeBy has passed. The step's durable timer has fired, or is about to, and the Supervisor
 * decides on the attempt, so the answer is not recorded (a late answer counts as none, as when the timer wins).
 */
export function answeredLate(record: StateRecord, address: RequestAddress, now: Date): boolean {
  return (
    !answerRecorded(record, address) && record.completeBy !== null && record.completeBy <= now.toISOString()
  );
}
