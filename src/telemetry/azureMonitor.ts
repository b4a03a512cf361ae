import { AzureFunctionsInstrumentation } from "@azure/functions-opentelemetry-instrumentation";
import { shutdownAzureMonitor, useAzureMonitor } from "@azure/monitor-opentelemetry";
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import type { TelemetryConfig } from "../config";
import { credentialFor } from "../app/credential";
import type { Telemetry } from "./telemetrySetUp";

/**
 * Application Insights through the Azure Monitor OpenTelemetry distro: the app's spans (requests for the functions'
 * own spans, dependencies for the calls), its metrics (customMetrics), and its outgoing HTTP calls (the store, the
 * remote services, the durable client), which the distro instruments. Ingestion takes Entra ID tokens only (the
 * component's local authentication is off), so the exporter signs in as the app's identity, the one
 * APPLICATIONINSIGHTS_AUTHENTICATION_STRING names for the host.
 *
 * Sampling is by trace id, at TRACE_SAMPLING_RATIO, on every instance alike: an order's trace is kept or dropped
 * whole. The distro's default is a rate limit per instance (tracesPerSecond), which would keep some spans of an
 * order and drop others; it is turned off.
 *
 * Two of the distro's instrumentations are left out, because in Azure they add envelopes and nothing to read (each
 * envelope is billed): the Azure SDKs' own spans, since the app makes a span for each send on an order's path
 * itself (with the trace context in the message) and the Service Bus SDK added a second one for every send, status
 * messages and alerts included (the store's requests are traced as HTTP); and the spans of incoming HTTP requests,
 * since the worker serves none in Azure (the host takes each request, invokes the function over its own channel,
 * and writes the request's telemetry itself). Locally the two made the devhost's work (its Service Bus receivers
 * and settlements, its HTTP server) look like the app's.
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
    instrumentationOptions: LEFT_OUT_INSTRUMENTATIONS,
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

/**
 * See startAzureMonitor. The HTTP instrumentation reads `disableIncomingRequestInstrumentation` (the distro types
 * `http` as the options every instrumentation shares). Not `ignoreIncomingRequestHook`: an ignored request runs
 * with tracing suppressed, which would silence the function's own spans under it.
 */
const INCOMING_HTTP_LEFT_OUT = { enabled: true, disableIncomingRequestInstrumentation: true };
const LEFT_OUT_INSTRUMENTATIONS = {
  azureSdk: { enabled: false },
  http: INCOMING_HTTP_LEFT_OUT,
};

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
