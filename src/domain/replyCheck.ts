import { parseInstanceId } from "./ids";
import type { AgentReply } from "./messages";
import type { StateRecord } from "./stateRecord";

/**
 * What a schema-valid reply is, measured against the state record of its order:
 * - `current`: it answers the request the attempt holding the record dispatched for that step and direction
 *   (or repeats that answer): deliver it to the orchestration;
 * - `stale`: it answers a request of an attempt that is over (the record moved on: a late or duplicate reply).
 *   Nothing may act on it, and nothing needs to: drop it;
 * - `unknown`: it answers no request the Scheduler recorded (an attempt or step that was never dispatched, or an
 *   order that does not exist). It was not written by an agent of this app: refuse it and alert.
 */
export type ReplyVerdict =
  { verdict: "current" } | { verdict: "stale"; reason: string } | { verdict: "unknown"; reason: string };

export function checkReply(record: StateRecord | undefined, reply: AgentReply): ReplyVerdict {
  const label = `step ${reply.stepIndex} ${reply.kind} of ${reply.instanceId}`;
  if (!record) return { verdict: "unknown", reason: `${label}: order ${reply.orderId} does not exist` };
  const attempt = parseInstanceId(reply.instanceId)?.attempt ?? 0;
  if (attempt > record.attempt) {
    return {
      verdict: "unknown",
      reason: `${label}: attempt ${attempt} was never started (the order is at attempt ${record.attempt})`,
    };
  }
  const step = record.steps[reply.stepIndex];
  if (!step) {
    return { verdict: "unknown", reason: `${label}: the order has ${record.steps.length} steps` };
  }
  if (attempt < record.attempt) {
    return { verdict: "stale", reason: `${label}: attempt ${attempt} is over (now ${record.attempt})` };
  }
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
