/**
 * The Azure path of src/telemetry/telemetry.ts, with the real Azure Monitor distro and its exporter pointed at a
 * stand-in for Application Insights' ingestion endpoint on loopback: the app's spans arrive as requests (server and
 * consumer spans) and dependencies (the others) of one operation, the trace, with their sas.* properties, and its
 * metrics as customMetrics. Without APPLICATIONINSIGHTS_AUTHENTICATION_STRING no token is asked for; with it, the
 * exporter signs in as the identity it names (not exercised here: there is no identity endpoint on this machine).
 * The exporter speaks https only: the stand-in serves a throwaway self-signed certificate (openssl), which this
 * test process trusts for its own loopback calls.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import type * as Metrics from "../../../src/telemetry/metrics";
import type * as TelemetryModule from "../../../src/telemetry/telemetry";
import type { Telemetry } from "../../../src/telemetry/telemetrySetUp";
import type * as Tracing from "../../../src/telemetry/tracing";
import {
  loopbackCertificate,
  startIngestionStandIn,
  type Envelope,
  type IngestionStandIn,
} from "../../../tools/ingestionStandIn";

// The compiled app, as the host loads it: telemetry.ts requires the distro's module on demand, by path.
const built = (file: string) =>
  createRequire(__filename)(path.join(inject("appBuildDir"), "src", "telemetry", file)) as unknown;
const { setupTelemetry } = built("telemetry.js") as typeof TelemetryModule;
const { recordAlert } = built("metrics.js") as typeof Metrics;
const { carry, inSpan, SpanKind, traceparentOf } = built("tracing.js") as typeof Tracing;

let standIn: IngestionStandIn | undefined;
let telemetry: Telemetry;
const received = (): Envelope[] => standIn?.received.map((r) => r.envelope) ?? [];

const certificate = loopbackCertificate();

beforeAll(async () => {
  if (!certificate) return;
  // Only this test process's calls, and only to the stand-in: the exporter offers no CA option.
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  standIn = await startIngestionStandIn(certificate);
  // The distro's own usage reports go to Microsoft's endpoint: not from a test.
  process.env.APPLICATIONINSIGHTS_STATSBEAT_DISABLED = "true";
  telemetry = setupTelemetry({
    azureMonitor: {
      connectionString: `InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=${standIn.url}`,
      credential: { kind: "none" },
    },
    localTracing: "memory",
    samplingRatio: 1,
  });
});

afterAll(async () => {
  await standIn?.close();
});

it.skipIf(!certificate)(
  "exports the app's spans as one operation of requests and dependencies, and its metrics",
  async () => {
    expect(telemetry).toMatchObject({ mode: "azureMonitor", buffer: undefined });
    const invocation = {};
    let traceparent: string | null = null;
    await inSpan(
      "process orders",
      { kind: SpanKind.CONSUMER, functionName: "submitOrder", attributes: { "sas.order_id": "ORD-AI-1" } },
      async (span) => {
        carry(invocation, { span, functionName: "submitOrder" });
        traceparent = traceparentOf(span);
        await inSpan(
          "send agent-replies",
          { kind: SpanKind.PRODUCER, from: invocation },
          async () => undefined,
        );
      },
    );
    recordAlert("Error");
    await telemetry.shutdown();

    const traceId = traceparent!.split("-")[1]!;
    const of = (baseType: string) => received().filter((e) => e.data.baseType === baseType);
    const request = of("RequestData").find((e) => e.data.baseData.name === "process orders");
    const dependency = of("RemoteDependencyData").find((e) => e.data.baseData.name === "send agent-replies");
    expect(request?.tags["ai.operation.id"]).toBe(traceId);
    expect(request?.data.baseData.properties).toMatchObject({
      "sas.order_id": "ORD-AI-1",
      "sas.function": "submitOrder",
    });
    expect(dependency?.tags["ai.operation.id"]).toBe(traceId);
    expect(dependency?.tags["ai.operation.parentId"]).toBe(request?.data.baseData.id);
    const alerts = of("MetricData").flatMap((e) => e.data.baseData.metrics ?? []);
    expect(alerts).toContainEqual(expect.objectContaining({ name: "sas.alerts", value: 1 }));
  },
);
