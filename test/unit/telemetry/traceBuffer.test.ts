/** The span buffer of LOCAL_TRACING=memory, and the tree the trace route builds from it. */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { BasicTracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { traceTree } from "../../../src/api/trace";
import { TraceBuffer } from "../../../src/telemetry/traceBuffer";

/**
 * Real SDK spans, ended into `buffer`: a root with two children, the second with a child of its own, each a
 * millisecond after the one before.
 */
function recordTrace(buffer: TraceBuffer): string {
  const tracer = new BasicTracerProvider({ spanProcessors: [buffer] }).getTracer("test");
  const t0 = Date.now();
  const at = (ms: number) => t0 + ms;
  const root = tracer.startSpan("root", {
    kind: SpanKind.SERVER,
    attributes: { "faas.name": "front" },
    startTime: at(0),
  });
  const inRoot = trace.setSpan(context.active(), root);
  const first = tracer.startSpan("first", { kind: SpanKind.PRODUCER, startTime: at(1) }, inRoot);
  first.end(at(2));
  const second = tracer.startSpan(
    "second",
    { kind: SpanKind.CONSUMER, attributes: { "sas.function": "worker" }, startTime: at(3) },
    inRoot,
  );
  const call = tracer.startSpan(
    "POST charge",
    {
      kind: SpanKind.CLIENT,
      attributes: { "peer.service": "payment", "sas.function": "worker", list: ["a", "b"] },
      startTime: at(4),
    },
    trace.setSpan(context.active(), second),
  );
  call.setStatus({ code: SpanStatusCode.ERROR, message: "HTTP 503" });
  call.end(at(6));
  second.end(at(7));
  root.end(at(8));
  return root.spanContext().traceId;
}

describe("TraceBuffer", () => {
  it("keeps the ended spans of each trace, without copying them", () => {
    const buffer = new TraceBuffer(100);
    const traceId = recordTrace(buffer);
    expect(buffer.spansOf(traceId).map((s) => s.name)).toEqual(["first", "POST charge", "second", "root"]);
    expect(buffer.size).toBe(4);
    expect(buffer.spansOf("f".repeat(32))).toEqual([]);
  });

  it("holds at most its capacity, dropping the oldest spans and forgetting a trace left with none", () => {
    const buffer = new TraceBuffer(6);
    const older = recordTrace(buffer);
    const newer = recordTrace(buffer);
    expect(buffer.size).toBe(6);
    expect(buffer.spansOf(newer)).toHaveLength(4);
    expect(buffer.spansOf(older).map((s) => s.name)).toEqual(["second", "root"]);
    recordTrace(buffer);
    expect(buffer.spansOf(older)).toEqual([]);
    expect(buffer.size).toBe(6);
  });
});

describe("traceTree", () => {
  it("lays a trace out in pre-order, with depth, offsets, status and the service of each span", () => {
    const buffer = new TraceBuffer();
    const tree = traceTree(buffer.spansOf(recordTrace(buffer)));
    expect(tree.map((s) => [s.depth, s.name, s.kind, s.service, s.status])).toEqual([
      [0, "root", "server", "front", "unset"],
      [1, "first", "producer", "front", "unset"],
      [1, "second", "consumer", "worker", "unset"],
      [2, "POST charge", "client", "payment", "error"],
    ]);
    expect(tree[0]).toMatchObject({ parentSpanId: null, startOffsetMs: 0 });
    expect(tree[3]).toMatchObject({
      parentSpanId: tree[2]!.spanId,
      statusMessage: "HTTP 503",
      startOffsetMs: 4,
      durationMs: 2,
    });
    expect(tree[3]!.attributes).toMatchObject({ list: "a,b", "peer.service": "payment" });
  });

  it("shows a span whose parent it does not have (not ended yet, or another process's) as a root", () => {
    const buffer = new TraceBuffer();
    const traceId = recordTrace(buffer);
    const withoutSecond: ReadableSpan[] = buffer.spansOf(traceId).filter((s) => s.name !== "second");
    expect(traceTree(withoutSecond).map((s) => [s.depth, s.name, s.parentSpanId === null])).toEqual([
      [0, "root", true],
      [1, "first", false],
      [0, "POST charge", true],
    ]);
  });
});
