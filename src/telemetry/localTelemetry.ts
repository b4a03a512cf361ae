import { metrics, trace } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Telemetry } from "./telemetrySetUp";
import { TraceBuffer } from "./traceBuffer";
import { TRACER_NAME } from "./tracing";

/** How often LOCAL_TRACING=console prints the metrics. */
export const CONSOLE_METRICS_INTERVAL_MS = 60_000;

/**
 * LOCAL_TRACING=memory or console: the OpenTelemetry SDK in this process. `memory` keeps the ended spans in the
 * trace buffer and exports nothing (no metrics either: nothing would read them); `console` prints spans in
 * batches, off the path of the span that ended, and the metrics once a minute. No context manager and no
 * propagator: the app hands each span on itself (tracing.ts), so nothing pays for AsyncLocalStorage.
 */
export function startLocalTelemetry(mode: "memory" | "console"): Telemetry {
  const resource = resourceFromAttributes({ "service.name": TRACER_NAME });
  const buffer = mode === "memory" ? new TraceBuffer() : undefined;
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [buffer ?? new BatchSpanProcessor(new ConsoleSpanExporter())],
  });
  trace.setGlobalTracerProvider(tracerProvider);
  const meterProvider =
    mode === "console"
      ? new MeterProvider({
          resource,
          readers: [
            new PeriodicExportingMetricReader({
              exporter: new ConsoleMetricExporter(),
              exportIntervalMillis: CONSOLE_METRICS_INTERVAL_MS,
            }),
          ],
        })
      : undefined;
  if (meterProvider) metrics.setGlobalMeterProvider(meterProvider);
  return {
    mode,
    buffer,
    shutdown() {
      // The globals first, at once: a set-up that follows this call registers its own right after it.
      trace.disable();
      if (meterProvider) metrics.disable();
      return Promise.allSettled([tracerProvider.shutdown(), meterProvider?.shutdown()]).then(() => undefined);
    },
  };
}
