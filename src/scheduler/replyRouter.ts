import type { InvocationContext } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { agentReplySchema, replyEventName, validate } from "../domain";
import { raiseAlert } from "./notify";

/** The part of the durable client the router needs. */
export interface EventRaiser {
  raiseEvent(instanceId: string, eventName: string, eventData: unknown): Promise<void>;
}

export type RouteOutcome = "delivered" | "unknownInstance" | "invalid";

/**
 * Turns an agent reply into an external event on the orchestration instance it names. A reply for an instance
 * that no longer exists is logged and dropped (completing the message): retrying it could never succeed. One for
 * a finished instance is accepted by the durable client and ignored. A duplicate reply for the same step is
 * raised again and never consumed, since each step waits only once: it changes nothing.
 */
export async function routeReply(
  deps: Dependencies,
  context: InvocationContext,
  client: EventRaiser,
  message: unknown,
): Promise<RouteOutcome> {
  const parsed = validate(agentReplySchema, message);
  if (!parsed.ok) {
    await raiseAlert(deps, context, {
      kind: "InvalidMessage",
      orderId: null,
      processState: null,
      reason: `agent-replies: ${parsed.message}`,
    });
    return "invalid";
  }
  const reply = parsed.value;
  try {
    await client.raiseEvent(reply.instanceId, replyEventName(reply.stepIndex, reply.kind), reply);
    return "delivered";
  } catch (error) {
    if (error instanceof Error && /No instance with ID/.test(error.message)) {
      context.warn(`agentReplies: ${reply.requestId} names unknown instance ${reply.instanceId}; dropped`);
      return "unknownInstance";
    }
    throw error;
  }
}
