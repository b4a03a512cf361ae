import type { HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import {
  operatorCancel,
  operatorRetry,
  orderFingerprint,
  processStateSchema,
  type TransitionResult,
  type StateRecord,
} from "../domain";
import { statusMessagesFromHistory } from "../domain/statusMessages";
import { QUEUES } from "../services/serviceBus";
import { validateOrder } from "../submission/submit";
import { json, problem, readJsonBody } from "./responses";

/** Seconds a client should wait after a 429: about one starter period, when capacity may have freed up. */
const RETRY_AFTER_SECONDS = 10;

/**
 * Front door: the same validation as the queue, admission control (429 while the Pending backlog is over
 * MAX_PENDING_BACKLOG, so a downstream incident shows up as backpressure instead of an unbounded backlog), a
 * conflict check for known ids, then enqueue with MessageId = orderId (duplicate detection drops a resend).
 */
export async function submitOrderRequest(
  deps: Dependencies,
  request: HttpRequest,
): Promise<HttpResponseInit> {
  const read = await readJsonBody(request, deps.config.maxRequestBytes);
  if (!read.ok) return read.response;
  const checked = validateOrder(read.body, deps.config.statusQueuePrefix);
  if (!checked.ok) return problem(400, checked.reason);
  const order = checked.order;

  const backlog = await deps.states.count(["Pending"]);
  if (backlog >= deps.config.maxPendingBacklog) {
    return json(
      429,
      {
        error: `pending backlog is ${backlog}, at or over MAX_PENDING_BACKLOG=${deps.config.maxPendingBacklog}; retry later`,
      },
      { "retry-after": String(RETRY_AFTER_SECONDS) },
    );
  }
  const known = await deps.orders.get(order.orderId);
  if (known && known.fingerprint !== orderFingerprint(order)) {
    return problem(409, `order ${order.orderId} was already submitted with different data`);
  }
  await deps.messaging.send(QUEUES.orders, {
    body: order,
    messageId: order.orderId,
    correlationId: order.orderId,
  });
  const statusUrl = new URL(`/api/orders/${encodeURIComponent(order.orderId)}`, request.url).toString();
  return json(202, { orderId: order.orderId, statusUrl }, { location: statusUrl });
}

/** 200 {order, state, statusMessages}: the messages the submitter was sent, derived from the audit trail. */
export async function getOrderRequest(deps: Dependencies, orderId: string): Promise<HttpResponseInit> {
  const [order, state] = await Promise.all([deps.orders.get(orderId), deps.states.get(orderId)]);
  if (!order && !state) return problem(404, `order ${orderId} not found`);
  return json(200, {
    order: order ?? null,
    state: state ?? null,
    statusMessages: state ? statusMessagesFromHistory(state) : [],
  });
}

export async function listOrdersRequest(deps: Dependencies, request: HttpRequest): Promise<HttpResponseInit> {
  const stateParam = request.query.get("state") ?? undefined;
  const state = stateParam === undefined ? undefined : processStateSchema.safeParse(stateParam);
  if (state && !state.success) {
    return problem(
      400,
      `state: expected one of ${processStateSchema.options.join(", ")}, got "${stateParam}"`,
    );
  }
  const limitParam = request.query.get("limit") ?? "50";
  const limit = Number(limitParam);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return problem(400, `limit: expected a whole number from 1 to 100, got "${limitParam}"`);
  }
  const page = await deps.states.list({
    state: state?.data,
    limit,
    continuation: request.query.get("continuation") ?? undefined,
  });
  return json(200, { items: page.items, continuation: page.continuation ?? null });
}

function operatorName(request: HttpRequest): string {
  return request.headers.get("x-operator")?.slice(0, 64) || "api";
}

/** Maps a store outcome of an operator action to the API's answer: 202, 404 or 409 with the refusal. */
function operatorResponse(
  outcome: Awaited<ReturnType<Dependencies["states"]["apply"]>>,
  orderId: string,
): HttpResponseInit {
  if (outcome.kind === "notFound") return problem(404, `order ${orderId} not found`);
  if (outcome.kind === "refused") {
    return problem(409, outcome.refusal.reason, {
      code: outcome.refusal.code,
      processState: outcome.refusal.processState,
    });
  }
  return json(202, { orderId, processState: outcome.record.processState });
}

export async function operatorActionRequest(
  deps: Dependencies,
  context: InvocationContext,
  request: HttpRequest,
  orderId: string,
  action: "retry" | "cancel",
): Promise<{ response: HttpResponseInit; record?: StateRecord }> {
  const operator = operatorName(request);
  const reason = request.query.get("reason") ?? undefined;
  const decide = (r: StateRecord): TransitionResult =>
    action === "retry"
      ? operatorRetry(r, { now: deps.now(), operator, ...(reason ? { reason } : {}) })
      : operatorCancel(r, { now: deps.now(), operator, ...(reason ? { reason } : {}) });
  const outcome = await deps.states.apply(orderId, decide);
  if (outcome.kind === "written")
    context.log(`operator ${operator}: ${action} ${orderId} → ${outcome.record.processState}`);
  return {
    response: operatorResponse(outcome, orderId),
    ...(outcome.kind === "written" ? { record: outcome.record } : {}),
  };
}
