/**
 * End-to-end throughput on the local stack without faults: the app (dist/, as `npm start` runs it) in a child
 * process, the emulators in this one, N orders posted to the front door as fast as it takes them. Reports
 * orders/s, submit-to-Processed latency, and the store requests and bus messages each order costs, beside the
 * ceiling those costs imply on the same emulators (a figure of the machine: it moves with it). It also
 * returns the order's profile in the units Azure bills (orderProfile.ts): store requests by operation and
 * container with document sizes, bus operations, the durable work read from the task hub once the app has
 * stopped, and the function executions of its log.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppProcess, compiledDevhostCli } from "../tools/appProcess";
import { scheduleIntervalSeconds } from "../src/domain";
import { StateReader } from "../tools/soak/observe";
import { startLocalStack } from "../tools/localStack";
import { submitAll } from "../tools/soak/submitter";
import { DEFAULT_SAMPLE_REPLY_TO, sampleOrders } from "../tools/sampleOrders";
import { STATUSES_PER_ORDER } from "./orderShape/shape";
import { percentile, submitToProcessedMs, waitAllProcessed, warmUp } from "./ordersThrough";
import { tallyTaskHub } from "devhost";
import {
  OBSERVER_USER_AGENT,
  StoreRequestCounter,
  countServiceBus,
  cpuProfileOptions,
  functionExecutions,
  cpuMeter,
} from "./instrument";
import {
  busProfile,
  durableProfile,
  functionsProfile,
  storeProfile,
  type OrderProfile,
} from "./orderProfile";
import { conditionalReplacesPerSecond } from "./storeCeiling";

/** The compiled app next to this file in dist/, and the compiled devhost package's CLI. */
export const DIST_APP = {
  cli: compiledDevhostCli(),
  appEntry: path.join(__dirname, "..", "src", "index.js"),
};

export interface EndToEndOptions {
  orders: number;
  /** Messages/s the bus sustains sending, receiving and completing (bench/servicebus.ts roundTripPerSec). */
  busRoundTripPerSec: number;
  /** Settings on top of the shipped local.settings.sample.json; default THROUGHPUT_SETTINGS. */
  settings?: Record<string, string>;
}

/**
 * The shipped settings, but with the starter every second. The starter claims only on its tick or on a new
 * submission, never when an order finishes, so once the submissions stop it admits at most MAX_IN_FLIGHT orders
 * per starter interval: 50 per 5 s = 10 orders/s with the shipped settings, whatever the stack could do.
 */
export const THROUGHPUT_SETTINGS: Record<string, string> = { STARTER_SCHEDULE: "*/1 * * * * *" };

export interface EndToEndFigures {
  orders: number;
  ordersPerSec: number;
  p50SubmitToProcessedMs: number;
  p99SubmitToProcessedMs: number;
  storeRequestsPerOrder: number;
  /** The same requests by kind: point reads, writes (creates, replaces, deletes) and queries. */
  storeReadsPerOrder: number;
  storeWritesPerOrder: number;
  storeQueriesPerOrder: number;
  /** CPU time of the app's process (user + system) per order during the measured run; NaN without /proc. */
  appCpuMsPerOrder: number;
  /**
   * The benchmark's own process (the emulators, the remote services, the load and its watcher) over the same
   * window: on two cores it competes with the app, and the app's load makes its work dearer (docs/benchmarks.md).
   */
  benchCpuMsPerOrder: number;
  messagesPerOrder: number;
  deliveriesPerOrder: number;
  storeConditionalReplacesPerSec: number;
  busRoundTripPerSec: number;
  /** MAX_IN_FLIGHT ÷ starter interval: the most the starter admits once submissions stop. */
  admissionCapOrdersPerSec: number;
  /** Orders/s the two emulators could serve at these costs, sharing this process's one thread. */
  ceilingOrdersPerSec: number;
}

export async function benchEndToEnd(
  options: EndToEndOptions,
): Promise<{ figures: EndToEndFigures; profile: OrderProfile }> {
  const store = new StoreRequestCounter();
  const bus = countServiceBus();
  const stack = await startLocalStack({
    onCosmosRequest: store.onRequest,
    onCosmosResponse: store.onResponse,
  });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-e2e-"));
  const reader = new StateReader(stack.cosmos, { userAgentSuffix: OBSERVER_USER_AGENT });
  const settings = stack.appSettings(options.settings ?? THROUGHPUT_SETTINGS);
  const app = new AppProcess({ ...DIST_APP, dataDir, settings, ...cpuProfileOptions() });
  try {
    const storeCeiling = await conditionalReplacesPerSecond(stack.cosmos, {
      replaces: 2_000,
    });
    await app.start();
    const target = { url: () => (app.running ? app.url : undefined) };
    await warmUp(target, reader, "BENCH-WARM");

    const orders = sampleOrders(options.orders, { prefix: "BENCH" });
    store.reset();
    bus.reset();
    const logOffset = fs.statSync(app.logFile).size;
    const cpu = cpuMeter(app.pid);
    const accepted = await submitAll(target, orders, { concurrency: 16 });
    // Each processed order has sent its submitter STATUSES_PER_ORDER status messages, as the shape's orders do.
    const statusesSent = () => bus.counts().sentByQueue[DEFAULT_SAMPLE_REPLY_TO] ?? 0;
    await waitAllProcessed(
      reader,
      orders.map((o) => o.orderId),
      { through: () => statusesSent() >= options.orders * STATUSES_PER_ORDER },
    );
    const storeRequests = store.count;
    const { app: appCpuMsPerOrder, bench: benchCpuMsPerOrder } = cpu.perOrder(options.orders);
    const perOrder = (match: (kind: string) => boolean) =>
      [...store.byKind].filter(([kind]) => match(kind)).reduce((sum, [, n]) => sum + n, 0) / options.orders;
    const busCounts = bus.counts();
    const storeProfiled = storeProfile(store.byKind, store.served, options.orders);

    const { sorted: latencies, lastProcessedAt: last } = await submitToProcessedMs(reader, accepted);
    const first = Math.min(...accepted.map((a) => a.submittedAt));
    const ordersPerSec = (options.orders * 1000) / (last - first);
    const storeRequestsPerOrder = storeRequests / options.orders;
    const messagesPerOrder = busCounts.sent / options.orders;
    const ceilingOrdersPerSec =
      1 / (storeRequestsPerOrder / storeCeiling + messagesPerOrder / options.busRoundTripPerSec);
    const round = (n: number, digits = 1) => Number(n.toFixed(digits));
    // The durable work is read from the task hub, which only a stopped app leaves to another process.
    await app.stop();
    const executions = functionExecutions(fs.readFileSync(app.logFile).subarray(logOffset).toString("utf8"));
    const hub = tallyTaskHub(path.join(dataDir, settings.TASK_HUB_NAME ?? ""));
    const profile: OrderProfile = {
      orders: options.orders,
      store: storeProfiled,
      bus: busProfile(busCounts, options.orders),
      durable: durableProfile(hub, new Set(orders.map((o) => o.orderId))),
      functions: functionsProfile(executions, options.orders, appCpuMsPerOrder),
      payloads: { documents: store.sampleDocuments(), messages: bus.samples() },
    };
    const figures: EndToEndFigures = {
      orders: options.orders,
      ordersPerSec: round(ordersPerSec),
      p50SubmitToProcessedMs: Math.round(percentile(latencies, 50)),
      p99SubmitToProcessedMs: Math.round(percentile(latencies, 99)),
      storeRequestsPerOrder: round(storeRequestsPerOrder),
      storeReadsPerOrder: round(perOrder((k) => k.startsWith("GET doc"))),
      storeWritesPerOrder: round(perOrder((k) => /^(PUT|DELETE) doc|^POST docs/.test(k))),
      storeQueriesPerOrder: round(perOrder((k) => k.startsWith("POST query"))),
      appCpuMsPerOrder: round(appCpuMsPerOrder),
      benchCpuMsPerOrder: round(benchCpuMsPerOrder),
      messagesPerOrder: round(messagesPerOrder),
      deliveriesPerOrder: round(busCounts.deliveries / options.orders),
      storeConditionalReplacesPerSec: storeCeiling,
      busRoundTripPerSec: options.busRoundTripPerSec,
      admissionCapOrdersPerSec: round(
        Number(settings.MAX_IN_FLIGHT) / scheduleIntervalSeconds(settings.STARTER_SCHEDULE ?? ""),
      ),
      ceilingOrdersPerSec: round(ceilingOrdersPerSec),
    };
    return { figures, profile };
  } finally {
    await app.stop();
    reader.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
