import type { TelemetryConfig } from "../config";
import type { TraceBuffer } from "./traceBuffer";

/**
 * What a telemetry set-up hands back (telemetry.ts chooses one, azureMonitor.ts and localTelemetry.ts make them):
 * a module of its own, so the set-ups need not import the module that loads them.
 */
export interface Telemetry {
  mode: "azureMonitor" | TelemetryConfig["localTracing"];
  /** The recent spans (LOCAL_TRACING=memory); undefined otherwise. */
  buffer: TraceBuffer | undefined;
  /** Exports what is pending and takes the set-up down: for tools, tests and a reload, never needed by the host. */
  shutdown(): Promise<void>;
}
