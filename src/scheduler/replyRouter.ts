import { agentReplySchema, answeredLate, checkReply, ORDER_ID_PATTERN, validateBody } from "../domain";
import type { Logger } from "../telemetry/logger";
import { annotate } from "../telemetry/tracing";
import { recordReply, type AfterReply, type SchedulerDependencies } from "./activities";
import type { AttemptClient } from "./durableClient";

export type RouteOutcome =
  /**
   * Recorded; `raised` when the move it led to ended the attempt's dispatches and was raised on the attempt's
   * orchestration (which the task hub knew).
   */
  | { kind: "recorded"; next: AfterReply; raised: boolean }
  | { kind: "stale"; reason: string }
  | { kind: "refused"; reason: string };

/**
 * Records an agent reply on the order's state record and tells the orchestration that waits for it what move the
 * answer led to, but only a reply that answers the request the Scheduler recorded for that attempt, step and
 * direction. Before any write:
 * - the reply must be valid, its instanceId an attempt of its own order and its requestId that attempt's id for
 *   the step (anything else was not written by an agent of this app: refused, with an InvalidMessage alert);
 * - the state record must show that request (a reply for an attempt or step that was never dispatched is refused
 *   the same way, so a forged answer can never wait, buffered, for the step it names);
 * - a reply to an attempt that is over is dropped: the record has moved on and the Supervisor owns recovery; so is
 *   an answer that came after the step's completeBy, as when the orchestration's timer wins the race.
 * What is left is the answer to the current request, or a repeat of it. It is recorded here, through the same fenced
 * transitions the `schedulerRecordReply` activity applies (a repeat finds them made), and the next move is
 * dispatched with it. Only a move that ends the attempt's dispatches (finished, stopped, fenced) is then raised on
 * the orchestration; a next step is not, since the orchestration's timer stands for it (orchestration.ts). Recording
 * in the reply path spares each step an activity, and raising only the end spares it an event and a timer: task
 * hub messages, orchestrator episodes and executions. Raising after the write means the timer may fire in between:
 * the orchestration's deadline activity then finds the answer recorded and goes on (`reportDeadline`).
 * A reply with every field right is indistinguishable from the agent's: only Service Bus rights stop it (see
 * docs/operations.md, "Trust boundaries").
 */
export async function routeReply(
  deps: SchedulerDependencies,
  log: Logger,
  client: Pick<AttemptClient, "deliverRecorded">,
  message: unknown,
  options: { alert: boolean } = { alert: true },
): Promise<RouteOutcome> {
  const refuse = async (orderId: string | null, reason: string): Promise<RouteOutcome> => {
    const full = `agent-replies: ${reason}`;
    if (options.alert) {
      await deps.notifications.alert(log, {
        kind: "InvalidMessage",
        orderId,
        processState: null,
        reason: full,
      });
    } else log.warn(`${full} (alerted on the first delivery)`);
    return { kind: "refused", reason: full };
  };
  const parsed = validateBody(agentReplySchema, message);
  if (!parsed.ok) {
    const orderId = (message as { orderId?: unknown } | null)?.orderId;
    return refuse(
      typeof orderId === "string" && ORDER_ID_PATTERN.test(orderId) ? orderId : null,
      parsed.message,
    );
  }
  const reply = parsed.value;
  annotate(log, {
    "sas.order_id": reply.orderId,
    "sas.instance_id": reply.instanceId,
    "sas.step": `${reply.stepIndex}:${reply.kind}`,
    "sas.outcome": reply.outcome,
  });
  // The version this instance wrote when it dispatched the request usually shows it; only a "no" is worth a read.
  let record = await deps.states.getRecent(reply.orderId);
  let verdict = checkReply(record, reply);
  if (verdict.verdict !== "current" && deps.states.isRecentCopy(record)) {
    record = await deps.states.get(reply.orderId);
    verdict = checkReply(record, reply);
  }
  if (verdict.verdict === "unknown") return refuse(reply.orderId, verdict.reason);
  if (verdict.verdict === "stale") return { kind: "stale", reason: verdict.reason };
  const now = deps.now();
  if (record && answeredLate(record, reply, now)) {
    return {
      kind: "stale",
      reason: `${reply.requestId}: answered at ${now.toISOString()}, after the step's completeBy ${record.completeBy}`,
    };
  }
  const next = await recordReply(deps, log, { orderId: reply.orderId, lockedBy: reply.instanceId, reply });
  try {
    return { kind: "recorded", next, raised: await client.deliverRecorded(reply, next) };
  } catch (error) {
    // The record names the attempt, but the task hub does not know it (purged, or a start that never ran). The
    // answer is recorded all the same; should the attempt wait for another, the Supervisor's sweep finds it.
    if (error instanceof Error && /No instance with ID/.test(error.message)) {
      log.warn(`agent-replies: ${reply.requestId} recorded; no orchestration ${reply.instanceId} to tell`);
      return { kind: "recorded", next, raised: false };
    }
    throw error;
  }
}
