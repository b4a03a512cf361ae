import { AzureFunctionsInstrumentation } from "@azure/functions-opentelemetry-instrumentation";
import { shutdownAzureMonitor, useAzureMonitor } from "@azure/monitor-opentelemetry";
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import type { TelemetryConfig } from "../config";
import { credentialFor } from "../app/credential";
import type { Telemetry } from "./telemetry";

/**
 * Application Insights through the Azure Monitor OpenTelemetry distro: the app's spans (requests for the functions'
 * own spans, dependencies for the calls), its metrics (customMetrics), and the Azure SDKs' calls, which the distro
 * instruments. Ingestion takes Entra ID tokens only (the component's local authentication is off), so the exporter
 * signs in as the app's identity, the one APPLICATIONINSIGHTS_AUTHENTICATION_STRING names for the host.
 *
 * Sampling is by trace id, at TRACE_SAMPLING_RATIO, on every instance alike: an order's trace is kept or dropped
 * whole. The distro's default is a rate limit per instance (tracesPerSecond), which would keep some spans of an
 * order and drop others; it is turned off.
 */
export function startAzureMonitor(
  azure: NonNullable<TelemetryConfig["azureMonitor"]>,
  samplingRatio: number,
): Telemetry {
  const credential =
    azure.credential.kind === "identity" ? credentialFor(azure.credential.clientId) : undefined;
  useAzureMonitor({
    azureMonitorExporterOptions: {
      connectionString: azure.connectionString,
      ...(credential ? { credential } : {}),
    },
    samplingRatio,
    tracesPerSecond: 0,
  });
  registerFunctionsInstrumentation();
  return {
    mode: "azureMonitor",
    buffer: undefined,
    shutdown() {
      trace.disable();
      context.disable();
      propagation.disable();
      metrics.disable();
      return shutdownAzureMonitor();
    },
  };
}

/** Log records dropped: the Functions host already sends the worker's log lines to Application Insights. */
const DROPPED_LOGS = { getLogger: () => ({ emit: () => undefined }) };

/**
 * @azure/functions-opentelemetry-instrumentation: each invocation runs in the context of the host's own span for it
 * (InvocationContext.traceContext), so the app's spans of an HTTP request sit under the host's request in
 * Application Insights; a message's spans still continue the trace its sender wrote (functions/traced.ts). It also
 * forwards the worker's log lines as OpenTelemetry log records and tells the host so (WorkerOpenTelemetryEnabled),
 * for a host whose telemetryMode is OpenTelemetry. This host keeps its Application Insights mode (host.json), which
 * sends those lines itself, so the instrumentation's copies are dropped rather than sent twice.
 */
export function registerFunctionsInstrumentation(): AzureFunctionsInstrumentation {
  // Enabled as it is made: it patches @azure/functions when the function files first load it, after this.
  const instrumentation = new AzureFunctionsInstrumentation();
  instrumentation.setTracerProvider(trace.getTracerProvider());
  instrumentation.setLoggerProvider(
    DROPPED_LOGS as unknown as Parameters<typeof instrumentation.setLoggerProvider>[0],
  );
  return instrumentation;
}
