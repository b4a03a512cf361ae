import {
  context,
  createContextKey,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from "@opentelemetry/api";
import {
  formatTraceparent,
  parseTraceparent,
  TRACE_PROPERTIES,
  type TraceParent,
} from "../domain/traceContext";

/**
 * The spans of an order, over the OpenTelemetry API only: what records and exports them is set up once per
 * process (telemetry.ts). With nothing set up every call here is the API's no-op, so the roles and their tests
 * run the same with tracing off.
 */

/** The instrumentation scope of every span of the app. */
export const TRACER_NAME = "scheduler-agent-supervisor";

// A proxy: it records with whatever provider telemetry.ts registers, even one registered after this line runs.
const tracer = trace.getTracer(TRACER_NAME);

export { SpanKind };

/** The context of a parent from elsewhere (a header, a message, a record), as a remote span. */
export function remoteContext(parent: TraceParent | undefined): Context | undefined {
  if (!parent) return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags,
    isRemote: true,
    ...(parent.tracestate ? { traceState: createTraceState(parent.tracestate) } : {}),
  });
}

/** The context a stored traceparent (a record's, an orchestration input's) names; undefined for none or junk. */
export function contextOf(traceparent: unknown): Context | undefined {
  return remoteContext(parseTraceparent(traceparent));
}

/** The function an invocation runs, kept in the context so that every span made inside it can say so. */
const FUNCTION = createContextKey("scheduler-agent-supervisor.function");

/** The attribute naming the function a span was made in (an entry span's faas.name, and every span under it). */
export const FUNCTION_ATTRIBUTE = "sas.function";

export interface SpanOptions {
  kind: SpanKind;
  /** The function this span's invocation runs (an entry span); absent: the one the active context names. */
  functionName?: string;
  /** The parent; absent: the active context (the invocation's, or none: a new trace). */
  parent?: Context | undefined;
  attributes?: Attributes;
  links?: Link[];
}

/**
 * Runs `fn` inside a new span, active for everything `fn` awaits, and ends it: with an error status and the
 * exception when `fn` throws (which it rethrows), else as `fn` left it.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const active = context.active();
  // Carried over to an explicit parent too (a record's context): the span still ran in this invocation.
  const functionName = options.functionName ?? (active.getValue(FUNCTION) as string | undefined);
  const parent = functionName
    ? (options.parent ?? active).setValue(FUNCTION, functionName)
    : (options.parent ?? active);
  return tracer.startActiveSpan(
    name,
    {
      kind: options.kind,
      attributes: functionName
        ? { ...options.attributes, [FUNCTION_ATTRIBUTE]: functionName }
        : (options.attributes ?? {}),
      ...(options.links ? { links: options.links } : {}),
    },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Runs `fn` as `functionName`'s invocation without a span of its own (a timer's tick): the spans it makes for an
 * order (a claim's start, a sweep's decision) still name the function they were made in.
 */
export function inFunction<T>(functionName: string, fn: () => Promise<T>): Promise<T> {
  return context.with(context.active().setValue(FUNCTION, functionName), fn);
}

/** Marks a span failed, with the error as its exception event. */
export function failed(span: Span, error: unknown, message?: string): void {
  if (!span.isRecording()) return;
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: message ?? (error instanceof Error ? error.message : String(error)),
  });
}

/** Adds what a role learnt (the order, an outcome) to the span it runs in; nothing when none records. */
export function annotate(attributes: Attributes): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.setAttributes(attributes);
}

/** The active span's context as a traceparent, or null outside any span: what a record or an input keeps. */
export function activeTraceparent(): string | null {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return null;
  return formatTraceparent({
    traceId: spanContext.traceId,
    spanId: spanContext.spanId,
    flags: spanContext.traceFlags,
  });
}

/**
 * The active span's context as the headers of an outgoing HTTP call (`traceparent`, `tracestate`), or none.
 * Written from the span itself: no propagator to configure, and the same format the receivers check.
 */
export function traceHeaders(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  const traceparent = formatTraceparent({
    traceId: spanContext.traceId,
    spanId: spanContext.spanId,
    flags: spanContext.traceFlags,
  });
  const tracestate = spanContext.traceState?.serialize();
  return tracestate
    ? { [TRACE_PROPERTIES.traceparent]: traceparent, [TRACE_PROPERTIES.tracestate]: tracestate }
    : { [TRACE_PROPERTIES.traceparent]: traceparent };
}

/**
 * The same as Service Bus application properties: `traceparent` and `tracestate`, and `Diagnostic-Id`, which the
 * Service Bus SDKs (and the Functions host's trigger) read, and which keeps the SDK's own tracing from writing
 * another context over ours.
 */
export function traceProperties(): Record<string, string> {
  const headers = traceHeaders();
  const traceparent = headers[TRACE_PROPERTIES.traceparent];
  return traceparent ? { ...headers, [TRACE_PROPERTIES.diagnosticId]: traceparent } : {};
}
