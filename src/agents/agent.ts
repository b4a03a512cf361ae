import type { InvocationContext } from "@azure/functions";
import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import { agentRequestSchema, validate, type AgentName, type AgentReply } from "../domain";
import { QUEUES } from "../services/serviceBus";
import { raiseAlert } from "../scheduler/notify";

/** What the Scheduler puts in a request's payload: the remote operation and its JSON body. */
const payloadSchema = z.strictObject({
  operation: z.string().regex(/^[a-z][a-zA-Z]*$/, { error: "expected an operation name such as charge" }),
  body: z.record(z.string(), z.unknown()),
});

export type AgentOutcome =
  | { kind: "replied"; reply: AgentReply; calls: number }
  | { kind: "dropped"; reason: string; calls: number }
  | { kind: "invalid"; reason: string };

/**
 * The Agent for one remote service: validates the request, calls the service with the step's idempotency key
 * through its resilience policies, and replies on `agent-replies`, all inside the step's completeBy. It never
 * starts a side effect after the deadline and never replies after it (the Scheduler has stopped waiting; the
 * Supervisor owns recovery). It does not try to recover the workflow itself.
 */
export async function handleAgentRequest(
  deps: Dependencies,
  context: InvocationContext,
  agent: AgentName,
  message: unknown,
): Promise<AgentOutcome> {
  const parsed = validate(agentRequestSchema, message);
  const payload = parsed.ok ? validate(payloadSchema, parsed.value.payload) : undefined;
  if (!parsed.ok || !payload?.ok) {
    const reason = !parsed.ok ? parsed.message : `payload.${payload!.ok ? "" : payload!.message}`;
    await raiseAlert(deps, context, {
      kind: "InvalidMessage",
      orderId: parsed.ok ? parsed.value.orderId : null,
      processState: null,
      reason: `${agent}-requests: ${reason}`,
    });
    return { kind: "invalid", reason };
  }
  const request = parsed.value;
  const deadline = new Date(request.completeBy);
  if (deps.now() >= deadline) {
    context.log(`${agent}: dropped ${request.requestId}: completeBy ${request.completeBy} has passed`);
    return { kind: "dropped", reason: "deadline passed before the call", calls: 0 };
  }

  const result = await deps.remote(agent).call(payload.value.operation, payload.value.body, {
    idempotencyKey: request.idempotencyKey,
    deadline,
  });
  if (deps.now() >= deadline) {
    context.log(
      `${agent}: no reply for ${request.requestId}: completeBy passed during the call (${result.outcome})`,
    );
    return { kind: "dropped", reason: "deadline passed during the call", calls: result.calls };
  }
  const reply: AgentReply = {
    requestId: request.requestId,
    orderId: request.orderId,
    instanceId: request.instanceId,
    stepIndex: request.stepIndex,
    kind: request.kind,
    outcome: result.outcome,
    ...(result.outcome === "ok" ? { result: result.body } : { error: result.error }),
  };
  await deps.messaging.send(QUEUES.agentReplies, {
    body: reply,
    messageId: request.requestId,
    correlationId: request.orderId,
    subject: result.outcome,
  });
  return { kind: "replied", reply, calls: result.calls };
}
