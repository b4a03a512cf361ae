import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { z } from "zod";
import {
  hasControlCharacters,
  isoTimestamp,
  operatorCancel,
  operatorRetry,
  orderIdSchema,
  processStateSchema,
  REFUSAL_CODES,
  stateRecordSchema,
  statusMessageSchema,
  submissionMessageId,
  validateBody,
  QUEUES,
  orderDocumentSchema,
  type Order,
  type StateRecord,
  type TransitionResult,
} from "../domain";
import { statusMessagesFromHistory } from "../domain/statusMessages";
import { recordSubmission, validateOrder, type SubmissionOutcome } from "../submission/submit";
import { CONTINUATION_PATTERN, issueContinuation } from "./continuation";
import { continuationParam, listLimit, routeOrderId, stateFilter } from "./params";
import type { Logger } from "../telemetry/logger";
import { auditName, type Principal } from "./principal";
import { describeInfraError, isTransientInfraError } from "../resilience/infraResilience";
import { waitAtMost } from "../resilience/waitAtMost";
import { json, problem, problemSchema, readJsonBody, withoutStoreFields } from "./responses";
import { outlivingLogger } from "../telemetry/tracing";

/** Seconds a client should wait after a 429: about one starter period, when capacity may have freed up. */
export const RETRY_AFTER_SECONDS = 10;

/**
 * The answers of the order routes. Each is the type of what its handler returns, and the OpenAPI document
 * (apiOperations.ts) is built from the same schemas, so the description cannot promise another shape.
 */
export const orderAcceptedSchema = z.strictObject({
  orderId: orderIdSchema,
  statusUrl: z
    .url()
    .describe("GET it with the function key for the order's status; also the Location header"),
});

/** A state record as the API shows it: without the store's own `_` fields (withoutStoreFields). */
export const shownStateRecordSchema = stateRecordSchema.omit({ _etag: true });

export const orderStatusSchema = z.strictObject({
  orderId: orderIdSchema,
  processState: processStateSchema
    .nullable()
    .describe("null for the moment between the 202 and the submission function's first write"),
  statusMessages: z.array(statusMessageSchema),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});

export const orderDetailsSchema = z.strictObject({
  order: orderDocumentSchema
    .nullable()
    .describe("The order as submitted; null if only its state record exists"),
  state: shownStateRecordSchema.nullable().describe("Steps and audit trail; null until the first write"),
  statusMessages: z.array(statusMessageSchema).describe("What the submitter was sent, from the audit trail"),
});

export const orderPageSchema = z.strictObject({
  items: z.array(shownStateRecordSchema).describe("Most recently updated first"),
  continuation: z
    .string()
    .regex(CONTINUATION_PATTERN)
    .nullable()
    .describe("Pass it back unchanged for the next page (an opaque, signed token); null on the last page"),
});

type OrderStatus = z.infer<typeof orderStatusSchema>;

export const operatorActionAcceptedSchema = z.strictObject({
  orderId: orderIdSchema,
  processState: processStateSchema.describe("Where the action moved the order"),
});

/** A 409 of retry or cancel: the transition's refusal, with its code and the state it refused in. */
export const operatorRefusalSchema = problemSchema.extend({
  details: z.strictObject({ code: z.enum(REFUSAL_CODES), processState: processStateSchema }),
});

/**
 * Front door: the same validation as the queue, admission control (429 while the Pending backlog is over
 * MAX_PENDING_BACKLOG, so a downstream incident shows up as backpressure instead of an unbounded backlog), then
 * the order document is created. Creating it is the decision: of two requests with the same orderId and different
 * data, exactly one creates it and gets 202, the other finds it and gets 409, however close together they arrive.
 * The front door then completes the submission itself, as the `orders` queue's function would (the state record and
 * the submitter's "received": recordSubmission), and runs the fast path's claim round. Should the state store fail
 * after the document was stored, the order goes to the `orders` queue instead, whose submission puts it back until
 * the store answers; should the bus fail too, the client gets 503 and sends the request again, and the Supervisor's
 * sweep completes a submission whose document has no record in any case. The same data again is 202 and a no-op.
 */
export async function submitOrderRequest(
  deps: Dependencies,
  request: HttpRequest,
  /** The invocation's log: its span is the order's trace (functions/traced.ts). */
  log: Logger,
  /** The fast path: a claim round, run once the order is recorded (best effort; the starter's timer is the rest). */
  claimRound: (log: Logger) => Promise<unknown> = async () => undefined,
): Promise<HttpResponseInit> {
  const read = await readJsonBody(request, deps.config.maxRequestBytes);
  if (!read.ok) return read.response;
  const checked = validateOrder(read.body, deps.config);
  if (!checked.ok) return problem(400, checked.reason);
  const order = checked.order;

  const backlog = await deps.backlog.pending();
  if (backlog >= deps.config.maxPendingBacklog) {
    return json(
      429,
      {
        error: `pending backlog is ${backlog}, at or over MAX_PENDING_BACKLOG=${deps.config.maxPendingBacklog}; retry later`,
      },
      { "retry-after": String(RETRY_AFTER_SECONDS) },
    );
  }
  const conflict = () => problem(409, `order ${order.orderId} was already submitted with different data`);
  let recorded: SubmissionOutcome | undefined;
  try {
    const stored = await deps.orders.ensure(order, deps.now());
    if (stored.kind === "conflict") return conflict();
    recorded = await recordAtTheDoor(deps, log, order);
    if (!recorded) {
      await deps.messaging.send(
        QUEUES.orders,
        { body: order, messageId: submissionMessageId(order), correlationId: order.orderId },
        log,
      );
    }
  } catch (error) {
    if (!isTransientInfraError(error)) throw error;
    return json(
      503,
      { error: `order ${order.orderId} not accepted: ${describeInfraError(error)}; send it again later` },
      { "retry-after": String(RETRY_AFTER_SECONDS) },
    );
  }
  if (recorded?.kind === "conflict") return conflict();
  if (recorded?.kind === "accepted" && recorded.created) await fastPath(order, claimRound, log);
  const statusUrl = new URL(
    `/api/orders/${encodeURIComponent(order.orderId)}/status`,
    request.url,
  ).toString();
  return json(202, { orderId: order.orderId, statusUrl } satisfies z.infer<typeof orderAcceptedSchema>, {
    location: statusUrl,
  });
}

/**
 * How long a POST waits for the fast path's claim round before it answers. A round takes tens of milliseconds; one
 * held up by a store fault (a stalled query) must not hold up the submitter, whose order is recorded already. As
 * with the backlog count (coordination/backlog.ts), the round then goes on after the answer: it is safe to cut
 * short (every place and claim is a conditional write, a claim that did not land gives its place back or is
 * found by the check), and what it leaves the starter's timer claims.
 */
export const FAST_PATH_WAIT_MS = 250;

/**
 * Runs the fast path's claim round for a new order, waiting for it at most FAST_PATH_WAIT_MS. A round still running
 * then goes on after the answer, and writes its lines to the process's log from then on (outlivingLogger).
 */
async function fastPath(
  order: Order,
  claimRound: (log: Logger) => Promise<unknown>,
  log: Logger,
): Promise<void> {
  const outliving = outlivingLogger(log);
  // The order is accepted whatever happens here: should the round fail, the starter's timer claims it.
  const round = claimRound(outliving.logger).then(
    () => undefined,
    (error: unknown) =>
      outliving.logger.warn(
        `order ${order.orderId}: claim round failed, left to the starter (${String(error)})`,
      ),
  );
  await waitAtMost(round, FAST_PATH_WAIT_MS, undefined);
  outliving.answered();
}

/**
 * The submission's second half at the front door (recordSubmission), or undefined when the state store did not
 * answer: the order then goes to the `orders` queue, whose submission retries through the outage. A conflict here
 * is answered 409 to the caller who sent it, so it raises no alert (the queue's submission alerts, having no caller).
 */
async function recordAtTheDoor(
  deps: Dependencies,
  log: Logger,
  order: Order,
): Promise<SubmissionOutcome | undefined> {
  try {
    return await recordSubmission(deps, log, order, async (raised) => {
      log.warn(`${raised.kind} for ${order.orderId}, answered 409: ${raised.reason}`);
    });
  } catch (error) {
    if (!isTransientInfraError(error)) throw error;
    log.warn(
      `order ${order.orderId}: state store unavailable (${describeInfraError(error)}); handed to the orders queue`,
    );
    return undefined;
  }
}

/** 200 {order, state, statusMessages}: the messages the submitter was sent, derived from the audit trail. */
export async function getOrderRequest(deps: Dependencies, request: HttpRequest): Promise<HttpResponseInit> {
  const orderId = routeOrderId(request);
  if (!orderId.ok) return problem(400, orderId.error);
  const [order, state] = await Promise.all([deps.orders.get(orderId.value), deps.states.get(orderId.value)]);
  if (!order && !state) return problem(404, `order ${orderId.value} not found`);
  return json(200, {
    order: order ? withoutStoreFields(order) : null,
    state: state ? withoutStoreFields(state) : null,
    statusMessages: state ? statusMessagesFromHistory(state) : [],
  } satisfies z.infer<typeof orderDetailsSchema>);
}

export async function listOrdersRequest(deps: Dependencies, request: HttpRequest): Promise<HttpResponseInit> {
  const state = stateFilter(request);
  if (!state.ok) return problem(400, state.error);
  const limit = listLimit(request);
  if (!limit.ok) return problem(400, limit.error);
  const after = continuationParam(request, deps.config.pagingKeys);
  if (!after.ok) return problem(400, after.error);
  const page = await deps.states.list({ state: state.value, limit: limit.value, after: after.value });
  return json(200, {
    items: page.items.map((record) => withoutStoreFields(record)),
    continuation: page.next ? issueContinuation(page.next, deps.config.pagingKeys) : null,
  } satisfies z.infer<typeof orderPageSchema>);
}

/** Why an operator acts, for the audit trail: short, and nothing that could break a log line. */
export const operatorReason = z
  .string()
  .max(200, { error: "expected at most 200 characters" })
  .refine((r) => !hasControlCharacters(r), { error: "expected no control characters" })
  .optional();

/** The optional body of retry and cancel: why, for the audit trail. */
export const operatorActionBody = z.strictObject({ reason: operatorReason });

export type OperatorAction = "retry" | "cancel";

/** The pure transition an operator action applies to one record, on behalf of `operator`, with `reason`. */
export function operatorDecision(
  action: OperatorAction,
  ctx: { now: () => Date; operator: string; reason?: string | undefined },
): (record: StateRecord) => TransitionResult {
  const context = () => ({
    now: ctx.now(),
    operator: ctx.operator,
    ...(ctx.reason ? { reason: ctx.reason } : {}),
  });
  return action === "retry" ? (r) => operatorRetry(r, context()) : (r) => operatorCancel(r, context());
}

/** Maps a store outcome of an operator action to the API's answer: 202, 404 or 409 with the refusal. */
function operatorResponse(
  outcome: Awaited<ReturnType<Dependencies["states"]["apply"]>>,
  orderId: string,
): HttpResponseInit {
  if (outcome.kind === "notFound") return problem(404, `order ${orderId} not found`);
  if (outcome.kind === "refused") {
    const { reason, code, processState } = outcome.refusal;
    return json(409, {
      error: reason,
      details: { code, processState },
    } satisfies z.infer<typeof operatorRefusalSchema>);
  }
  return json(202, {
    orderId,
    processState: outcome.record.processState,
  } satisfies z.infer<typeof operatorActionAcceptedSchema>);
}

/**
 * Retry or cancel, by a principal the caller has authorized. The body is JSON (`{}` or `{"reason": "..."}`) and
 * must say so: a cross-site form cannot send application/json without the browser asking first, which no origin
 * is allowed, so a signed-in operator's session cannot be used from another site.
 */
export async function operatorActionRequest(
  deps: Pick<Dependencies, "config" | "states" | "now">,
  log: Logger,
  request: HttpRequest,
  action: OperatorAction,
  principal: Principal,
): Promise<{ response: HttpResponseInit; record?: StateRecord }> {
  const routeId = routeOrderId(request);
  if (!routeId.ok) return { response: problem(400, routeId.error) };
  const orderId = routeId.value;
  const read = await readJsonBody(request, deps.config.maxRequestBytes, { emptyAs: {} });
  if (!read.ok) return { response: read.response };
  const body = validateBody(operatorActionBody, read.body);
  if (!body.ok) return { response: problem(400, body.message) };
  const operator = auditName(principal);
  const decide = operatorDecision(action, { now: () => deps.now(), operator, reason: body.value.reason });
  const outcome = await deps.states.apply(orderId, decide);
  if (outcome.kind === "written")
    log.log(`operator ${operator}: ${action} ${orderId} → ${outcome.record.processState}`);
  return {
    response: operatorResponse(outcome, orderId),
    ...(outcome.kind === "written" ? { record: outcome.record } : {}),
  };
}

/**
 * GET /api/orders/{orderId}/status: what the submitter may know of its order (the same a status queue tells it),
 * for machine clients that hold a function key rather than an operator's sign-in. No audit trail, no locks.
 * Between the 202 and the submission function's first write (usually well under a second) the order is known
 * but has no state yet: processState is null.
 */
export async function orderStatusRequest(
  deps: Dependencies,
  request: HttpRequest,
): Promise<HttpResponseInit> {
  const orderId = routeOrderId(request);
  if (!orderId.ok) return problem(400, orderId.error);
  const [order, state] = await Promise.all([deps.orders.get(orderId.value), deps.states.get(orderId.value)]);
  if (!state) {
    if (!order) return problem(404, `order ${orderId.value} not found`);
    return json(200, {
      orderId: order.orderId,
      processState: null,
      statusMessages: [],
      createdAt: order.submittedAt,
      updatedAt: order.submittedAt,
    } satisfies OrderStatus);
  }
  return json(200, {
    orderId: state.orderId,
    processState: state.processState,
    statusMessages: statusMessagesFromHistory(state),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
  } satisfies OrderStatus);
}
