import {
  context,
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
  type Tracer,
} from "@opentelemetry/api";
import {
  formatTraceparent,
  parseTraceparent,
  TRACE_PROPERTIES,
  type TraceParent,
} from "../domain/traceContext";
import type { Logger } from "./logger";

/**
 * The spans of an order, over the OpenTelemetry API only: what records and exports them is set up once per
 * process (telemetry.ts). With nothing set up every call here is the API's no-op, so the roles and their tests
 * run the same with tracing off.
 *
 * The span a piece of code runs in travels with the logger it is handed (the invocation's InvocationContext, or a
 * span's logger from `spanLogger`), not in an ambient async context: keeping a context across every await takes
 * AsyncLocalStorage, whose promise hooks cost every promise of the process (about 13 ms of CPU per order here,
 * against well under 1 ms for the spans). Each span is still made the active one for what it runs, so that a
 * context manager someone else registers (the Azure Monitor distro's, in Azure) parents the Azure SDKs' own
 * spans under it.
 */

/** The instrumentation scope of every span of the app. */
export const TRACER_NAME = "scheduler-agent-supervisor";

// The API's proxy tracer records with whatever provider is registered later, but belongs to the global proxy of
// its time, which trace.disable() replaces (a reload of the app, the Azure Monitor distro starting): so it is
// taken again whenever the global proxy changes.
let made: { provider: unknown; tracer: Tracer } | undefined;
function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (made?.provider !== provider) made = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return made.tracer;
}

export { SpanKind };

/** The attribute naming the function a span was made in (an entry span's faas.name, and every span under it). */
export const FUNCTION_ATTRIBUTE = "sas.function";
/** Application Insights' operation name tag, which its exporter takes from a span attribute of that name. */
export const REQUEST_NAME_ATTRIBUTE = "ai.operation.name";

/** What a logger (an invocation's context, a span's logger) stands for: the span it runs in, and its function. */
interface Carried {
  span?: Span;
  functionName?: string;
}
const carried = new WeakMap<object, Carried>();

/** The span `log` runs in (an invocation's entry span, or a span's own logger); undefined for none. */
export function spanOf(log: object | undefined): Span | undefined {
  return log === undefined ? undefined : carried.get(log)?.span;
}

/** Says that what runs with `log` (an invocation's context) runs in `span`, within `functionName`. */
export function carry(log: object, what: Carried): void {
  carried.set(log, { ...carried.get(log), ...what });
}

/** A logger of its own (the key to what it carries) that writes each line through the logger `sink()` gives then. */
function writingThrough(sink: () => Logger): Logger {
  return {
    log: (...args) => sink().log(...args),
    warn: (...args) => sink().warn(...args),
    error: (...args) => sink().error(...args),
  };
}

/** A logger that writes through `log` and stands for `span`: for the callees of a span that take a logger. */
export function spanLogger(log: Logger, span: Span): Logger {
  const child = writingThrough(() => log);
  carried.set(child, { ...carried.get(log), span });
  return child;
}

/**
 * A logger for work its invocation may stop waiting for (a best-effort claim round): it writes through `log` until
 * `answered()`, then through `after` (the process's console). The host refuses lines from an invocation that has
 * completed: it warns of a call "after function execution has completed" and ties the line to no invocation.
 */
export function outlivingLogger(log: Logger, after: Logger = console): { logger: Logger; answered(): void } {
  let sink = log;
  const logger = writingThrough(() => sink);
  const what = carried.get(log);
  if (what) carried.set(logger, what);
  return { logger, answered: () => void (sink = after) };
}

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

export interface SpanOptions {
  kind: SpanKind;
  /** The parent, when it is not the span `from` runs in: a message's, a record's, an input's. */
  parent?: Context | undefined;
  /** The logger of the code making the span: its span is the parent (unless `parent` says otherwise). */
  from?: object | undefined;
  /** The function this span's invocation runs (an entry span); absent: the one `from` runs in. */
  functionName?: string;
  attributes?: Attributes;
  links?: Link[];
}

/**
 * Runs `fn` inside a new span and ends it: with an error status and the exception when `fn` throws (which it
 * rethrows), else as `fn` left it. Without a parent or a `from` span, the span's parent is the active context
 * (in Azure, the host's span of the invocation), else none: a new trace.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const from = options.from === undefined ? undefined : carried.get(options.from);
  const parent = options.parent ?? (from?.span ? trace.setSpan(ROOT_CONTEXT, from.span) : context.active());
  const functionName = options.functionName ?? from?.functionName;
  const attributes: Attributes = { ...options.attributes };
  if (functionName) attributes[FUNCTION_ATTRIBUTE] = functionName;
  // Application Insights names the request a consumer span becomes after this tag only (it derives one for server
  // spans alone): without it, a message's or an activity's request would have no name.
  if (options.kind === SpanKind.CONSUMER) attributes[REQUEST_NAME_ATTRIBUTE] = name;
  return tracer().startActiveSpan(
    name,
    {
      kind: options.kind,
      attributes,
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

/** Marks a span failed, with the error as its exception event. */
export function failed(span: Span, error: unknown, message?: string): void {
  if (!span.isRecording()) return;
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: message ?? (error instanceof Error ? error.message : String(error)),
  });
}

/** Adds what a role learnt (the order, an outcome) to the span `log` runs in; nothing when none records. */
export function annotate(log: object, attributes: Attributes): void {
  const span = spanOf(log);
  if (span?.isRecording()) span.setAttributes(attributes);
}

/** A span's context as a traceparent, or null for none: what a record or an input keeps. */
export function traceparentOf(span: Span | undefined): string | null {
  const spanContext = span?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return null;
  return formatTraceparent({
    traceId: spanContext.traceId,
    spanId: spanContext.spanId,
    flags: spanContext.traceFlags,
  });
}

/**
 * A span's context as the headers of an outgoing HTTP call (`traceparent`, `tracestate`), or none. Written from
 * the span itself: no propagator to configure, and the same format the receivers check.
 */
export function traceHeaders(span: Span | undefined): Record<string, string> {
  const traceparent = traceparentOf(span);
  if (!traceparent) return {};
  const tracestate = span!.spanContext().traceState?.serialize();
  return tracestate
    ? { [TRACE_PROPERTIES.traceparent]: traceparent, [TRACE_PROPERTIES.tracestate]: tracestate }
    : { [TRACE_PROPERTIES.traceparent]: traceparent };
}

/**
 * The same as Service Bus application properties: `traceparent` and `tracestate`, and `Diagnostic-Id`, which the
 * Service Bus SDKs (and the Functions host's trigger) read, and which keeps the SDK's own tracing from writing
 * another context over ours.
 */
export function traceProperties(span: Span | undefined): Record<string, string> {
  const headers = traceHeaders(span);
  const traceparent = headers[TRACE_PROPERTIES.traceparent];
  return traceparent ? { ...headers, [TRACE_PROPERTIES.diagnosticId]: traceparent } : {};
}
