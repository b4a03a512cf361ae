import type { Context } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** Spans kept by LOCAL_TRACING=memory: a few hundred orders' worth (23 to 35 spans each), about 13 MB. */
export const TRACE_BUFFER_SPANS = 10_000;

/**
 * The recent spans of this process, for GET /api/orders/{orderId}/trace and the dashboard's trace view on the
 * devhost (LOCAL_TRACING=memory). Ending a span only stores a reference in a ring and in its trace's list: no
 * copy, no serialisation, nothing exported; the cost is paid when someone asks for a trace. The oldest span
 * goes when the ring is full, so a trace older than the last TRACE_BUFFER_SPANS spans is incomplete or gone.
 * One process only: in Azure, every instance would hold a different part of a trace (Application Insights holds
 * all of it).
 */
export class TraceBuffer implements SpanProcessor {
  private readonly ring: (ReadableSpan | undefined)[];
  private next = 0;
  private kept = 0;
  private readonly byTrace = new Map<string, ReadableSpan[]>();

  constructor(readonly capacity: number = TRACE_BUFFER_SPANS) {
    this.ring = new Array<ReadableSpan | undefined>(capacity);
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    const evicted = this.ring[this.next];
    if (evicted) this.forget(evicted);
    else this.kept++;
    this.ring[this.next] = span;
    this.next = (this.next + 1) % this.capacity;
    const traceId = span.spanContext().traceId;
    const spans = this.byTrace.get(traceId);
    if (spans) spans.push(span);
    else this.byTrace.set(traceId, [span]);
  }

  /** The ended spans of a trace that are still kept, in the order they ended. */
  spansOf(traceId: string): readonly ReadableSpan[] {
    return this.byTrace.get(traceId) ?? [];
  }

  /** Spans kept now. */
  get size(): number {
    return this.kept;
  }

  private forget(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId;
    const spans = this.byTrace.get(traceId);
    if (!spans) return;
    // Spans leave in the order they came, so the evicted one is its trace's first.
    if (spans[0] === span) spans.shift();
    else spans.splice(spans.indexOf(span), 1);
    if (spans.length === 0) this.byTrace.delete(traceId);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.ring.fill(undefined);
    this.byTrace.clear();
    this.kept = 0;
    return Promise.resolve();
  }
}
