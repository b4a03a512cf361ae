import type { Dependencies } from "../app/dependencies";
import { agentReplySchema, checkReply, ORDER_ID_PATTERN, validateBody } from "../domain";
import type { Logger } from "../telemetry/logger";
import { annotate } from "../telemetry/tracing";
import type { AttemptClient } from "./durableClient";

export type RouteOutcome =
  | { kind: "delivered" }
  | { kind: "stale"; reason: string }
  | { kind: "unknownInstance"; reason: string }
  | { kind: "refused"; reason: string };

/**
 * Turns an agent reply into an external event on the orchestration that waits for it, but only a reply that
 * answers the request the Scheduler recorded for that attempt, step and direction. Before any durable call:
 * - the reply must be valid, its instanceId an attempt of its own order and its requestId that attempt's id for
 *   the step (anything else was not written by an agent of this app: refused, with an InvalidMessage alert);
 * - the state record must show that request (a reply for an attempt or step that was never dispatched is refused
 *   the same way, so a forged answer can never wait, buffered, for the step it names);
 * - a reply to an attempt that is over is dropped: the record has moved on and the Supervisor owns recovery.
 * What is left is a reply for the current request, or a repeat of it, which the orchestration consumes once.
 * A reply with every field right is indistinguishable from the agent's: only Service Bus rights stop it (see
 * docs/operations.md, "Trust boundaries").
 */
export async function routeReply(
  deps: Pick<Dependencies, "states" | "notifications">,
  log: Logger,
  client: Pick<AttemptClient, "deliverReply">,
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
  const known = await deps.states.getRecent(reply.orderId);
  let verdict = checkReply(known, reply);
  if (verdict.verdict !== "current" && deps.states.isRecentCopy(known))
    verdict = checkReply(await deps.states.get(reply.orderId), reply);
  if (verdict.verdict === "unknown") return refuse(reply.orderId, verdict.reason);
  if (verdict.verdict === "stale") return { kind: "stale", reason: verdict.reason };
  try {
    await client.deliverReply(reply);
    return { kind: "delivered" };
  } catch (error) {
    // The record names the attempt, but the task hub does not know it (purged, or a start that never ran).
    if (error instanceof Error && /No instance with ID/.test(error.message)) {
      return { kind: "unknownInstance", reason: `${reply.requestId}: no orchestration ${reply.instanceId}` };
    }
    throw error;
  }
}
