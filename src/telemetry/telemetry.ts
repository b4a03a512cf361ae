import type { TelemetryConfig } from "../config";
import type { Telemetry } from "./telemetrySetUp";

/**
 * The one place that decides where the app's spans and metrics go, run by src/index.ts before any function is
 * registered (and before the Azure SDKs load, which the Azure Monitor distro instruments when they do):
 * - Application Insights when APPLICATIONINSIGHTS_CONNECTION_STRING is set (Azure): the Azure Monitor distro,
 *   signed in with the app's identity (azureMonitor.ts);
 * - else LOCAL_TRACING (localTelemetry.ts): `memory` keeps the recent spans in this process for the trace route
 *   (the devhost), `console` prints spans and metrics to stdout, `off` records nothing.
 * Each is loaded only when chosen: with tracing off a cold start loads no SDK at all, and in Azure only the
 * distro's.
 */

const OFF: Telemetry = { mode: "off", buffer: undefined, shutdown: () => Promise.resolve() };

/** Where the app's set-up lives for this process: the API's globals outlive a reload of the app's modules. */
const CURRENT = Symbol.for("scheduler-agent-supervisor.telemetry");
type Holder = { [CURRENT]?: Telemetry };

/** The telemetry this process set up (off before, or without, setupTelemetry). */
export function currentTelemetry(): Telemetry {
  return (globalThis as Holder)[CURRENT] ?? OFF;
}

/**
 * Sets telemetry up for this process. A second call (the devhost loading the app again in the same process) first
 * takes the earlier set-up down: the OpenTelemetry API holds one provider of each kind per process.
 */
export function setupTelemetry(config: TelemetryConfig): Telemetry {
  const holder = globalThis as Holder;
  const earlier = holder[CURRENT];
  if (earlier) void earlier.shutdown();
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, see above */
  const telemetry: Telemetry = config.azureMonitor
    ? (require("./azureMonitor") as typeof import("./azureMonitor")).startAzureMonitor(
        config.azureMonitor,
        config.samplingRatio,
      )
    : config.localTracing === "off"
      ? OFF
      : (require("./localTelemetry") as typeof import("./localTelemetry")).startLocalTelemetry(
          config.localTracing,
        );
  /* eslint-enable @typescript-eslint/no-require-imports */
  holder[CURRENT] = telemetry;
  return telemetry;
}
