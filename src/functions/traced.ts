import type { HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import { trace, type Attributes, type Link } from "@opentelemetry/api";
import { messageTraceParent, ORDER_ID_PATTERN, parseTraceparent } from "../domain";
import { carry, contextOf, failed, inSpan, remoteContext, SpanKind } from "../telemetry/tracing";

/**
 * The span of each invocation that carries an order's trace (docs/operations.md#tracing): a message's
 * processing, the front door's request, an activity. Its parent is the context the message, the request or the
 * activity's input brought; a missing or malformed one starts a new trace, and never fails the invocation. The
 * host's own span of the invocation (InvocationContext.traceContext; the Functions host makes one in Azure) is
 * linked, so Application Insights leads from the host's request to the order's trace. The invocation's context
 * carries its span from then on (telemetry/tracing.ts): what the handler does with it joins the span.
 */

function invocationAttributes(context: InvocationContext, trigger: string): Attributes {
  return {
    "faas.name": context.functionName,
    "faas.invocation_id": context.invocationId,
    "faas.trigger": trigger,
  };
}

/** The host's span of this invocation, as a link; none locally, where the devhost makes none. */
function hostLink(context: InvocationContext): Link[] {
  const host = parseTraceparent(context.traceContext?.traceParent, context.traceContext?.traceState);
  const hostContext = remoteContext(host);
  const spanContext = hostContext && trace.getSpanContext(hostContext);
  return spanContext ? [{ context: spanContext }] : [];
}

const orderIdOf = (body: unknown): string | undefined => {
  const orderId = (body as { orderId?: unknown } | null)?.orderId;
  return typeof orderId === "string" && ORDER_ID_PATTERN.test(orderId) ? orderId : undefined;
};

/**
 * A handler that makes no span of its own (a timer, an operator's action), though what it does for an order may:
 * those spans join the order's trace and name this function.
 */
export function namedInvocation<A, T>(
  handler: (trigger: A, context: InvocationContext) => Promise<T>,
): (trigger: A, context: InvocationContext) => Promise<T> {
  return (trigger, context) => {
    carry(context, { functionName: context.functionName });
    return handler(trigger, context);
  };
}

/** A Service Bus trigger's handler, run in a consumer span that continues the message's trace. */
export function tracedMessage<T>(
  queue: string,
  handler: (message: unknown, context: InvocationContext) => Promise<T>,
): (message: unknown, context: InvocationContext) => Promise<T> {
  return (message, context) => {
    const metadata = context.triggerMetadata ?? {};
    const { parent, verdict } = messageTraceParent(metadata.applicationProperties);
    const orderId = orderIdOf(message);
    const messageId = metadata.messageId;
    return inSpan(
      `process ${queue}`,
      {
        kind: SpanKind.CONSUMER,
        functionName: context.functionName,
        parent: remoteContext(parent),
        links: parent ? hostLink(context) : [],
        attributes: {
          ...invocationAttributes(context, "pubsub"),
          "messaging.system": "servicebus",
          "messaging.operation.type": "process",
          "messaging.destination.name": queue,
          ...(typeof messageId === "string" ? { "messaging.message.id": messageId } : {}),
          "messaging.servicebus.message.delivery_count": Number(metadata.deliveryCount ?? 1),
          // continued, absent (a new trace) or refused (malformed: a new trace, the message handled all the same)
          "sas.trace_context": verdict,
          ...(orderId ? { "sas.order_id": orderId } : {}),
        },
      },
      (span) => {
        carry(context, { span, functionName: context.functionName });
        return handler(message, context);
      },
    );
  };
}

/**
 * An HTTP handler, run in a server span that continues the caller's `traceparent` (and `tracestate`) when it sends
 * a valid one.
 */
export function tracedRequest(
  route: string,
  handler: (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>,
): (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit> {
  return (request, context) => {
    const given = request.headers.get("traceparent");
    const parent = parseTraceparent(given, request.headers.get("tracestate"));
    return inSpan(
      `${request.method} /api/${route}`,
      {
        kind: SpanKind.SERVER,
        functionName: context.functionName,
        parent: remoteContext(parent),
        links: parent ? hostLink(context) : [],
        attributes: {
          ...invocationAttributes(context, "http"),
          "http.request.method": request.method,
          "http.route": `/api/${route}`,
          "url.path": new URL(request.url).pathname,
          "sas.trace_context": parent ? "continued" : given ? "refused" : "absent",
        },
      },
      async (span) => {
        carry(context, { span, functionName: context.functionName });
        const response = await handler(request, context);
        const status = response.status ?? 200;
        span.setAttribute("http.response.status_code", status);
        if (status >= 500) failed(span, new Error(`HTTP ${status}`));
        const orderId = orderIdOf(response.jsonBody);
        if (orderId) span.setAttribute("sas.order_id", orderId);
        return response;
      },
    );
  };
}

/**
 * A durable activity, run in a span under the attempt's context, which the orchestration passes in the activity's
 * input (`traceparent`): the orchestrator function itself makes no span, since it replays.
 */
export function tracedActivity<T>(
  name: string,
  handler: (input: unknown, context: InvocationContext) => Promise<T>,
): (input: unknown, context: InvocationContext) => Promise<T> {
  return (input, context) => {
    const given = (input as { traceparent?: unknown } | null)?.traceparent;
    const parent = contextOf(given);
    const orderId = orderIdOf(input);
    return inSpan(
      `activity ${name}`,
      {
        kind: SpanKind.CONSUMER,
        functionName: context.functionName,
        parent,
        links: parent ? hostLink(context) : [],
        attributes: {
          ...invocationAttributes(context, "other"),
          ...(orderId ? { "sas.order_id": orderId } : {}),
          "sas.trace_context": parent ? "continued" : given === undefined ? "absent" : "refused",
        },
      },
      (span) => {
        carry(context, { span, functionName: context.functionName });
        return handler(input, context);
      },
    );
  };
}
