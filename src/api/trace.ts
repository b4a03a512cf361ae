import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { SpanKind, SpanStatusCode, type AttributeValue, type HrTime } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import { isoTimestamp, orderIdSchema, parseTraceparent } from "../domain";
import type { TraceBuffer } from "../telemetry/traceBuffer";
import { FUNCTION_ATTRIBUTE } from "../telemetry/tracing";
import { routeOrderId } from "./params";
import { json, problem } from "./responses";

const KINDS = ["internal", "server", "client", "producer", "consumer"] as const;
const KIND_NAMES: Record<SpanKind, (typeof KINDS)[number]> = {
  [SpanKind.INTERNAL]: "internal",
  [SpanKind.SERVER]: "server",
  [SpanKind.CLIENT]: "client",
  [SpanKind.PRODUCER]: "producer",
  [SpanKind.CONSUMER]: "consumer",
};

export const traceSpanSchema = z.strictObject({
  spanId: z.string().regex(/^[0-9a-f]{16}$/),
  parentSpanId: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .nullable()
    .describe(
      "null for a root: the trace's first span, or one whose parent is not kept (or is another process's)",
    ),
  depth: z.int().nonnegative().describe("0 for a root; a span's children follow it, one deeper"),
  name: z.string(),
  kind: z.enum(KINDS),
  service: z
    .string()
    .describe("The remote service a client span called, else the function the span was made in"),
  startTime: isoTimestamp,
  startOffsetMs: z.number().nonnegative().describe("From the start of the trace's first span"),
  durationMs: z.number().nonnegative(),
  status: z.enum(["unset", "ok", "error"]),
  statusMessage: z.string().nullable(),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
export type TraceSpan = z.infer<typeof traceSpanSchema>;

/** The answer of GET /api/orders/{orderId}/trace (the OpenAPI document is built from it). */
export const orderTraceSchema = z.strictObject({
  orderId: orderIdSchema,
  traceId: z.string().regex(/^[0-9a-f]{32}$/),
  spans: z
    .array(traceSpanSchema)
    .describe(
      "The trace as a tree in pre-order: each root, then its children by start time, each with theirs",
    ),
  buffer: z
    .strictObject({ capacity: z.int().positive(), spans: z.int().nonnegative() })
    .describe("This process's span buffer (LOCAL_TRACING=memory): the oldest spans go first once it is full"),
});
type OrderTrace = z.infer<typeof orderTraceSchema>;

const millis = ([seconds, nanos]: HrTime): number => seconds * 1000 + nanos / 1e6;

function attributesOf(span: ReadableSpan): Record<string, string | number | boolean> {
  const shown: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(span.attributes) as [string, AttributeValue | undefined][]) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      shown[key] = value;
    else if (Array.isArray(value)) shown[key] = value.join(",");
  }
  return shown;
}

/**
 * The spans of one trace as a tree, in pre-order, timed from the first span's start. A span whose parent is not
 * among them is shown as a root. Only here are spans turned into JSON: the buffer keeps them as they ended.
 */
export function traceTree(spans: readonly ReadableSpan[]): TraceSpan[] {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = new Map<string | null, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent && ids.has(parent) ? parent : null;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  for (const list of children.values()) list.sort((a, b) => millis(a.startTime) - millis(b.startTime));
  const origin = Math.min(...spans.map((s) => millis(s.startTime)));
  const tree: TraceSpan[] = [];
  const visit = (span: ReadableSpan, depth: number, inherited: string): void => {
    const attributes = attributesOf(span);
    const made = attributes[FUNCTION_ATTRIBUTE] ?? attributes["faas.name"];
    const own = typeof made === "string" ? made : inherited;
    const peer = attributes["peer.service"];
    const spanId = span.spanContext().spanId;
    const parent = span.parentSpanContext?.spanId;
    tree.push({
      spanId,
      parentSpanId: parent && ids.has(parent) ? parent : null,
      depth,
      name: span.name,
      kind: KIND_NAMES[span.kind],
      service: span.kind === SpanKind.CLIENT && typeof peer === "string" ? peer : own,
      startTime: new Date(millis(span.startTime)).toISOString(),
      startOffsetMs: Math.round((millis(span.startTime) - origin) * 1000) / 1000,
      durationMs: Math.round(millis(span.duration) * 1000) / 1000,
      status:
        span.status.code === SpanStatusCode.ERROR
          ? "error"
          : span.status.code === SpanStatusCode.OK
            ? "ok"
            : "unset",
      statusMessage: span.status.message ?? null,
      attributes,
    });
    for (const child of children.get(spanId) ?? []) visit(child, depth + 1, own);
  };
  const service = (span: ReadableSpan) => String(span.resource.attributes["service.name"] ?? "app");
  for (const root of children.get(null) ?? []) visit(root, 0, service(root));
  return tree;
}

/**
 * GET /api/orders/{orderId}/trace: the order's trace as this process kept it (LOCAL_TRACING=memory, the devhost):
 * the trace its state record names. 404 for an unknown order, an order with no trace (submitted with tracing
 * off), a trace whose spans are all gone from the buffer, and when this process keeps no spans at all; in Azure
 * the trace is in Application Insights (docs/operations.md#tracing).
 */
export async function orderTraceRequest(
  deps: Pick<Dependencies, "states">,
  buffer: TraceBuffer | undefined,
  request: HttpRequest,
): Promise<HttpResponseInit> {
  const routeId = routeOrderId(request);
  if (!routeId.ok) return problem(400, routeId.error);
  const orderId = routeId.value;
  if (!buffer) {
    return problem(
      404,
      "this process keeps no spans (LOCAL_TRACING is not memory); in Azure, look the order up in Application Insights",
    );
  }
  const record = await deps.states.get(orderId);
  if (!record) return problem(404, `order ${orderId} not found`);
  const parent = parseTraceparent(record.traceparent);
  if (!parent) return problem(404, `order ${orderId} has no trace: it was submitted while tracing was off`);
  const spans = buffer.spansOf(parent.traceId);
  if (spans.length === 0) {
    return problem(
      404,
      `no span of trace ${parent.traceId} is kept any more: the buffer keeps the last ${buffer.capacity} spans`,
    );
  }
  return json(200, {
    orderId,
    traceId: parent.traceId,
    spans: traceTree(spans),
    buffer: { capacity: buffer.capacity, spans: buffer.size },
  } satisfies OrderTrace);
}
