/**
 * What an order's traces amount to in Application Insights at the shipped TRACE_SAMPLING_RATIO (1: every order's
 * whole trace), which the cost section does not count: the app runs as the end-to-end run runs it, but with
 * APPLICATIONINSIGHTS_CONNECTION_STRING set, so that it starts the Azure Monitor distro it starts in Azure, whose
 * real exporter sends to a stand-in for the ingestion endpoint on loopback (tools/ingestionStandIn.ts). It counts
 * the envelopes sent while the measured orders went through, and their bytes (those of the orders' own traces
 * apart), and prices them at bench/azureRates.ts's Log Analytics rule and price. The Functions host's own telemetry (a request per invocation, its log lines) is not
 * in it: the devhost makes none.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppProcess } from "../tools/appProcess";
import { loopbackCertificate, startIngestionStandIn, type Envelope } from "../tools/ingestionStandIn";
import { startLocalStack } from "../tools/localStack";
import { sampleOrders } from "../tools/sampleOrders";
import { StateReader } from "../tools/soak/observe";
import { submitAll } from "../tools/soak/submitter";
import { PRICES, SERVICE_RULES } from "./azureRates";
import { DIST_APP, THROUGHPUT_SETTINGS } from "./endToEnd";
import { OBSERVER_USER_AGENT } from "./instrument";
import { waitAllProcessed, warmUp } from "./ordersThrough";

/** Longer than the exporter's batch delay (the OpenTelemetry batch span processor's 5 s): the last batch is sent. */
const EXPORT_WAIT_MS = 8_000;
const ORDER_PREFIX = "TELEMETRY";
/** Envelope names listed one by one when they come at least this often per order. */
const MIN_NAMED_PER_ORDER = 0.1;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The envelopes of the orders' own traces: every envelope whose operation (the trace) also holds one that names a
 * measured order in `sas.order_id`.
 */
export function orderTraceEnvelopes<T extends { envelope: Envelope }>(
  received: readonly T[],
  isMeasuredOrder: (orderId: string) => boolean,
): T[] {
  const traces = new Set<string>();
  for (const { envelope } of received) {
    const orderId = envelope.data.baseData.properties?.["sas.order_id"];
    const trace = envelope.tags["ai.operation.id"];
    if (orderId && trace && isMeasuredOrder(orderId)) traces.add(trace);
  }
  return received.filter((r) => traces.has(r.envelope.tags["ai.operation.id"] ?? ""));
}

const KIND_OF: Record<string, string> = {
  RequestData: "request",
  RemoteDependencyData: "dependency",
  MetricData: "metric",
};

/**
 * How many envelopes of each kind and name, the order ids in a name written `{orderId}`: what an order's trace is
 * made of, so that a span made twice, or one the worker does not make in Azure, shows (the breakdown that found
 * the Azure SDKs' second span for each send and the devhost's receivers). Most first, then by name.
 */
export function envelopesByName(
  received: readonly { envelope: Envelope }[],
  orderIds: RegExp,
): Array<[name: string, count: number]> {
  const counts = new Map<string, number>();
  for (const { envelope } of received) {
    const type = envelope.data.baseType;
    const name = (envelope.data.baseData.name ?? "").replace(orderIds, "{orderId}");
    const key = `${KIND_OF[type] ?? type} ${name}`.trimEnd();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** $ per million orders for `bytesPerOrder` of envelopes, at the Log Analytics rule and price. */
export function telemetryUsdPerMillionOrders(bytesPerOrder: number): number {
  return (
    ((bytesPerOrder * SERVICE_RULES.telemetryBilledShare.value) / 1e9) * PRICES.logAnalyticsPerGb.value * 1e6
  );
}

export async function benchTelemetry(options: { orders: number }): Promise<Record<string, number>> {
  const certificate = loopbackCertificate();
  if (!certificate) {
    console.log("  telemetry: skipped, openssl is missing (the exporter needs an https ingestion endpoint)");
    return {};
  }
  const standIn = await startIngestionStandIn(certificate);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-telemetry-"));
  // The app trusts the stand-in's certificate, and only it; NODE_EXTRA_CA_CERTS is read when a process starts.
  const caFile = path.join(dataDir, "ingestion-ca.pem");
  fs.writeFileSync(caFile, certificate.cert);
  const caBefore = process.env.NODE_EXTRA_CA_CERTS;
  process.env.NODE_EXTRA_CA_CERTS = caFile;
  const stack = await startLocalStack();
  const settings = stack.appSettings({
    ...THROUGHPUT_SETTINGS,
    APPLICATIONINSIGHTS_CONNECTION_STRING: `InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=${standIn.url}`,
    // The distro's own usage reports go to Microsoft's endpoint: not from a benchmark.
    APPLICATIONINSIGHTS_STATSBEAT_DISABLED: "true",
  });
  const app = new AppProcess({ ...DIST_APP, dataDir, settings });
  const reader = new StateReader(stack.cosmos, { userAgentSuffix: OBSERVER_USER_AGENT });
  try {
    await app.start();
    const target = { url: () => (app.running ? app.url : undefined) };
    await warmUp(target, reader, `${ORDER_PREFIX}-WARM`);
    await sleep(EXPORT_WAIT_MS);
    const from = standIn.received.length;
    const orders = sampleOrders(options.orders, { prefix: ORDER_PREFIX });
    const measured = new Set(orders.map((o) => o.orderId));
    const started = Date.now();
    await submitAll(target, orders, { concurrency: 16 });
    await waitAllProcessed(reader, [...measured]);
    const seconds = (Date.now() - started) / 1000;
    await sleep(EXPORT_WAIT_MS);
    await app.stop();

    // Everything the app sent while the orders went through: their traces, and what is not in them (the timers'
    // rounds, the metrics).
    const during = standIn.received.slice(from);
    const ofOrders = orderTraceEnvelopes(during, (id) => measured.has(id));
    if (ofOrders.length === 0)
      throw new Error(
        `telemetry: no envelope of the measured orders reached the stand-in (${during.length} in all)`,
      );
    const perOrder = (n: number) => Number((n / options.orders).toFixed(2));
    const bytesOf = (list: typeof during) => list.reduce((sum, r) => sum + r.bytes, 0);
    const bytesPerOrder = bytesOf(during) / options.orders;
    const byType = new Map<string, { count: number; bytes: number }>();
    for (const { envelope, bytes } of during) {
      const type = byType.get(envelope.data.baseType) ?? { count: 0, bytes: 0 };
      type.count++;
      type.bytes += bytes;
      byType.set(envelope.data.baseType, type);
    }
    const figures: Record<string, number> = {
      orders: options.orders,
      seconds: Number(seconds.toFixed(1)),
      envelopesPerOrder: perOrder(during.length),
      bytesPerOrder: Math.round(bytesPerOrder),
      meanEnvelopeBytes: Math.round(bytesOf(during) / during.length),
      orderTraceEnvelopesPerOrder: perOrder(ofOrders.length),
      orderTraceBytesPerOrder: Math.round(bytesOf(ofOrders) / options.orders),
      usdPerMillionOrders: Number(telemetryUsdPerMillionOrders(bytesPerOrder).toFixed(2)),
    };
    for (const [type, { count, bytes }] of [...byType].sort()) {
      figures[`${type}.perOrder`] = perOrder(count);
      figures[`${type}.bytesPerOrder`] = Math.round(bytes / options.orders);
    }
    // Names that come with the orders; a timer's occasional round is in the totals above.
    for (const [name, count] of envelopesByName(during, new RegExp(`${ORDER_PREFIX}-\\d+`, "g")))
      if (count / options.orders >= MIN_NAMED_PER_ORDER) figures[`named: ${name}`] = perOrder(count);
    return figures;
  } finally {
    await app.stop();
    await stack.stop();
    await standIn.close();
    if (caBefore === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = caBefore;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
