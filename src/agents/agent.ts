import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import {
  agentRequestSchema,
  capText,
  checkRequest,
  dispatchedRequest,
  requestMismatch,
  jsonBytes,
  MAX_ERROR_CODE_LENGTH,
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_RESULT_BYTES,
  validate,
  validateBody,
  QUEUES,
  type AgentName,
  type AgentReply,
  type AgentRequest,
  type StateRecord,
} from "../domain";
import type { RemoteOutcome } from "../remote/remoteService";
import { alertAnswerProblems } from "./answerAlerts";
import type { Logger } from "../telemetry/logger";
import { annotate } from "../telemetry/tracing";

/** What the Scheduler puts in a request's payload: the remote operation and its JSON body. */
const payloadSchema = z.strictObject({
  operation: z.string().regex(/^[a-z][a-zA-Z]*$/, { error: "expected an operation name such as charge" }),
  body: z.record(z.string(), z.unknown()),
});

/**
 * What became of one delivered request: `calls` made to the service, `injected` of them hit by chaos on purpose
 * (CHAOS_*, staging only; 0 while it is off).
 */
export type RequestHandling =
  | { kind: "replied"; reply: AgentReply; calls: number; injected: number }
  | { kind: "dropped"; reason: string; calls: number; injected: number }
  | { kind: "invalid"; reason: string }
  | { kind: "refused"; reason: string };

/**
 * The Agent for one remote service: validates the request, checks it is the dispatch its order's state record shows
 * in progress, calls the service with the step's idempotency key through its resilience policies, and replies on
 * `agent-replies`, all inside the step's completeBy. It never starts a side effect after the deadline and never
 * replies after it (the Scheduler has stopped waiting; the Supervisor owns recovery). It does not try to recover
 * the workflow itself.
 *
 * Send rights to a request queue are the perimeter, but a message there is not proof that the Scheduler sent it:
 * the agent acts only on the request the record has dispatched to it now, and sends what the record says (operation,
 * body, idempotency key and deadline, derived as the dispatcher derives them), never what the message says. A
 * request the Scheduler never dispatched is refused (`refused`: set aside, InvalidMessage alert); one it did
 * dispatch but the record has moved past is dropped without a call (`dropped`).
 */
export async function handleAgentRequest(
  deps: Pick<
    Dependencies,
    "messaging" | "notifications" | "remote" | "now" | "states" | "orders" | "workflows"
  >,
  log: Logger,
  agent: AgentName,
  message: unknown,
  options: { alert: boolean } = { alert: true },
): Promise<RequestHandling> {
  const refuse = async (orderId: string | null, reason: string, kind: "invalid" | "refused") => {
    const alert = {
      kind: "InvalidMessage" as const,
      orderId,
      processState: null,
      reason: `${agent}-requests: ${reason}`,
    };
    if (options.alert) await deps.notifications.alert(log, alert);
    else log.warn(`${alert.reason} (alerted on the first delivery)`);
    return { kind, reason };
  };
  const parsed = validateBody(agentRequestSchema, message);
  const payload = parsed.ok ? validate(payloadSchema, parsed.value.payload) : undefined;
  if (!parsed.ok || !payload?.ok) {
    const reason = !parsed.ok ? parsed.message : `payload.${payload!.ok ? "" : payload!.message}`;
    return refuse(parsed.ok ? parsed.value.orderId : null, reason, "invalid");
  }
  const received = parsed.value;
  // The agent request's span is the one its message is processed in (functions/traced.ts).
  annotate(log, {
    "sas.order_id": received.orderId,
    "sas.instance_id": received.instanceId,
    "sas.step": `${received.step}:${received.kind}`,
  });
  const judged = await judgeRequest(deps, agent, received);
  if (judged.verdict === "unknown") return refuse(received.orderId, judged.reason, "refused");
  if (judged.verdict === "stale") {
    log.log(`${agent}: dropped ${received.requestId}: ${judged.reason}`);
    return { kind: "dropped", reason: "the record has moved past the request", calls: 0, injected: 0 };
  }
  const { request, payload: sent, deadline: completeBy } = judged;
  const deadline = new Date(completeBy);
  if (deps.now() >= deadline) {
    log.log(`${agent}: dropped ${request.requestId}: completeBy ${completeBy} has passed`);
    return { kind: "dropped", reason: "deadline passed before the call", calls: 0, injected: 0 };
  }

  const result = await deps.remote(agent).call(sent.operation, sent.body, {
    idempotencyKey: request.idempotencyKey,
    orderId: request.orderId,
    log,
    deadline,
  });
  // Before the reply: a redelivery after the reply finds the step answered and drops it, alert and all.
  if (result.problems) await alertAnswerProblems(deps, log, agent, request, sent.operation, result.problems);
  if (deps.now() >= deadline) {
    log.log(
      `${agent}: no reply for ${request.requestId}: completeBy passed during the call (${result.outcome})`,
    );
    return {
      kind: "dropped",
      reason: "deadline passed during the call",
      calls: result.calls,
      injected: result.injected,
    };
  }
  annotate(log, { "sas.outcome": result.outcome, "sas.calls": result.calls });
  const reply: AgentReply = {
    requestId: request.requestId,
    orderId: request.orderId,
    instanceId: request.instanceId,
    stepIndex: request.stepIndex,
    kind: request.kind,
    ...replyOutcome(result),
  };
  await deps.messaging.send(
    QUEUES.agentReplies,
    { body: reply, messageId: request.requestId, correlationId: request.orderId, subject: result.outcome },
    log,
  );
  return { kind: "replied", reply, calls: result.calls, injected: result.injected };
}

/** What the dispatcher built the payload from: an operation name and a JSON object (src/domain/workflow.ts). */
type DispatchedPayload = { operation: string; body: Record<string, unknown> };

type Judged =
  | { verdict: "current"; request: AgentRequest; payload: DispatchedPayload; deadline: string }
  | { verdict: "stale"; reason: string }
  | { verdict: "unknown"; reason: string };

/**
 * The request measured against its order's record (src/domain/requestCheck.ts), and, when it is the dispatch in
 * progress, against the request the dispatcher built from the record and the order document. It starts from this
 * instance's copy of the record, which is the version the dispatch wrote when the Scheduler ran here (no store
 * request); a copy that says anything but yes may be behind, so the store is asked then, as the reply router does.
 * The order document comes from OrderStore's cache (it never changes).
 */
async function judgeRequest(
  deps: Pick<Dependencies, "states" | "orders" | "workflows">,
  agent: AgentName,
  received: AgentRequest,
): Promise<Judged> {
  const judge = async (record: StateRecord | undefined): Promise<Judged> => {
    const verdict = checkRequest(record, record && deps.workflows.get(record.workflow), agent, received);
    if (verdict.verdict !== "current") return verdict;
    const order = await deps.orders.get(received.orderId);
    if (!order) throw new Error(`order ${received.orderId} has a state record but no order document`);
    const request = dispatchedRequest(record!, verdict.definition, order, received);
    const mismatch = requestMismatch(received, request);
    if (mismatch) return { verdict: "unknown", reason: mismatch };
    const payload = request.payload as DispatchedPayload;
    return { verdict: "current", request, payload, deadline: verdict.deadline };
  };
  const known = await deps.states.getRecent(received.orderId);
  const judged = await judge(known);
  if (judged.verdict === "current" || !deps.states.isRecentCopy(known)) return judged;
  return judge(await deps.states.get(received.orderId));
}

/**
 * The agent's one line about a request it handled, e.g. `payment: replied transient (3 calls, 3 hit by injected
 * chaos)`: an operator reading the log of a staging run sees which outcomes chaos caused.
 */
export function handlingSummary(agent: AgentName, handling: RequestHandling): string {
  if (handling.kind === "invalid" || handling.kind === "refused")
    return `${agent}: ${handling.kind} (${handling.reason})`;
  const what =
    handling.kind === "replied" ? `replied ${handling.reply.outcome}` : `dropped (${handling.reason})`;
  const chaos = handling.injected > 0 ? `, ${handling.injected} hit by injected chaos` : "";
  return `${agent}: ${what} (${handling.calls} call${handling.calls === 1 ? "" : "s"}${chaos})`;
}

/**
 * The reply's outcome, within the bounds the Scheduler accepts. A remote service's error message is shortened. An
 * answer too large to keep in the state record is reported as transient rather than trimmed: its effect may exist,
 * and the undo may need fields it holds, so the attempt fails and retries (and ends in Error, for an operator,
 * if the service keeps answering that way), instead of recording a success without them.
 */
function replyOutcome(
  result: RemoteOutcome,
): Pick<AgentReply, "outcome" | "result" | "error" | "unavailableUntil"> {
  if (result.outcome === "transient" && result.unavailableUntil && result.calls === 0) {
    // No call was made: the Scheduler parks the order instead of counting a failure (src/domain/transitions/outage.ts).
    return {
      outcome: "transient",
      error: { code: result.error.code, message: capText(result.error.message, MAX_ERROR_MESSAGE_LENGTH) },
      unavailableUntil: result.unavailableUntil.toISOString(),
    };
  }
  if (result.outcome === "ok") {
    const size = jsonBytes(result.body);
    if (size <= MAX_RESULT_BYTES) return { outcome: "ok", result: result.body };
    return {
      outcome: "transient",
      error: {
        code: "ResultTooLarge",
        message: `the service answered ${size} bytes of JSON; at most ${MAX_RESULT_BYTES} are kept`,
      },
    };
  }
  return {
    outcome: result.outcome,
    error: {
      code: capText(result.error.code, MAX_ERROR_CODE_LENGTH),
      message: capText(result.error.message, MAX_ERROR_MESSAGE_LENGTH),
    },
  };
}
