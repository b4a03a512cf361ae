/** The app's sas.* metrics, read through a real meter provider of the OpenTelemetry SDK. */
import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  MetricReader,
  type MetricData,
} from "@opentelemetry/sdk-metrics";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StateRecord } from "../../../src/domain";
import {
  METRICS,
  observeOrdersPerState,
  recordAlert,
  recordRecovery,
  recordStateWrite,
} from "../../../src/telemetry/metrics";
import { pendingRecord, sampleOrder } from "../../support/domain";

class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  async metric(name: string): Promise<MetricData | undefined> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  }
}

let reader: Reader;
beforeEach(() => {
  reader = new Reader();
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterEach(() => metrics.disable());

const points = (metric: MetricData | undefined) =>
  (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));

const record = (overrides: Partial<StateRecord>): StateRecord => ({
  ...pendingRecord(sampleOrder({ orderId: "M-1" })),
  createdAt: "2026-01-01T00:00:00.000Z",
  ...overrides,
});

describe("metrics", () => {
  it("counts each transition by from and to, and times the way to a terminal state", async () => {
    const created = record({});
    const processing = record({ processState: "Processing", updatedAt: "2026-01-01T00:00:01.000Z" });
    const processed = record({ processState: "Processed", updatedAt: "2026-01-01T00:00:02.500Z" });
    recordStateWrite(null, created);
    recordStateWrite(created, processing);
    recordStateWrite(processing, processing); // a write inside a state is no transition
    recordStateWrite(processing, processed);
    expect(points(await reader.metric(METRICS.transitions))).toEqual([
      { attributes: { from: "none", to: "Pending" }, value: 1 },
      { attributes: { from: "Pending", to: "Processing" }, value: 1 },
      { attributes: { from: "Processing", to: "Processed" }, value: 1 },
    ]);
    const histogram = await reader.metric(METRICS.timeToTerminal);
    expect(histogram?.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(histogram?.dataPoints).toHaveLength(1);
    expect(histogram?.dataPoints[0]).toMatchObject({
      attributes: { state: "Processed", workflow: `${created.workflow.name}:v${created.workflow.version}` },
      value: { count: 1, sum: 2.5 },
    });
  });

  it("counts the Supervisor's decisions by action and what found them, and the alerts by kind", async () => {
    recordRecovery("Pending", "deadline");
    recordRecovery("Pending", "deadline");
    recordRecovery("Error", "sweep");
    recordRecovery("CompensationFailed", "deadline");
    recordAlert("Error");
    recordAlert("ServiceUnavailable");
    expect(points(await reader.metric(METRICS.recoveries))).toEqual([
      { attributes: { action: "retry", trigger: "deadline" }, value: 2 },
      { attributes: { action: "gaveUp", trigger: "sweep" }, value: 1 },
      { attributes: { action: "gaveUpCompensation", trigger: "deadline" }, value: 1 },
    ]);
    expect(points(await reader.metric(METRICS.alerts))).toEqual([
      { attributes: { kind: "Error" }, value: 1 },
      { attributes: { kind: "ServiceUnavailable" }, value: 1 },
    ]);
  });

  it("reports the orders per state only where the count is given (the Supervisor's leader)", async () => {
    let leader = false;
    const counts = {
      Pending: 3,
      Processing: 2,
      Processed: 10,
      CompensationPending: 0,
      Compensating: 0,
      Compensated: 1,
      CompensationFailed: 0,
      Error: 1,
    };
    observeOrdersPerState(() => (leader ? Promise.resolve(counts) : undefined));
    expect(points(await reader.metric(METRICS.ordersPerState))).toEqual([]);
    leader = true;
    const shown = points(await reader.metric(METRICS.ordersPerState));
    expect(shown).toHaveLength(8);
    expect(shown).toContainEqual({ attributes: { state: "Processed" }, value: 10 });
  });
});
