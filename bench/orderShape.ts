/**
 * What an order's shape costs on the devhost with the business taken out: the order-shape app
 * (orderShape/app.ts) makes the hops of one order of the real app (its function executions, durable actions,
 * messages, store requests and remote calls) and nothing else, in a child process as the end-to-end run runs the
 * real one. Its CPU per order is the least the real app could spend per order on the devhost while it keeps this
 * shape: what the app spends above it is its own code.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { tallyTaskHub } from "devhost";
import { AppProcess, compiledDevhostCli } from "../tools/appProcess";
import { startLocalStack } from "../tools/localStack";
import {
  countServiceBus,
  cpuProfileOptions,
  functionExecutions,
  cpuMeter,
  StoreRequestCounter,
} from "./instrument";
import {
  busProfile,
  durableProfile,
  functionsProfile,
  storeProfile,
  type OrderProfile,
} from "./orderProfile";
import { callsPerOrder } from "./sdkCost";
import type { Order } from "../src/domain/order";
import { sampleOrders } from "../tools/sampleOrders";
import {
  CLAIM_QUERY_KIND,
  DOCUMENT_KINDS,
  PAYLOADS_FILE_SETTING,
  REMOTE_URL_SETTING,
  SHAPE_QUEUES,
  STATUS_QUEUE,
  STATUSES_PER_ORDER,
  type ShapeDocumentKind,
  type ShapePayloads,
} from "./orderShape/shape";

const SHAPE_APP = {
  cli: compiledDevhostCli(),
  appEntry: path.join(__dirname, "orderShape", "app.js"),
};

/** Orders posted at once, as the end-to-end run posts the real ones. */
const CONCURRENCY = 16;
const WARMUP_ORDERS = 20;
/** Longest the shape's orders may take to get through; then the benchmark fails rather than hang. */
const THROUGH_TIMEOUT_MS = 300_000;
/** What the remote service answers each call: about as large as the simulator's answers. */
const REMOTE_ANSWER = JSON.stringify({ outcome: "applied", reference: "shape-0000000000000000" });

export interface OrderShapeOptions {
  orders: number;
  /** The end-to-end run's order profile: the hops to make, with the sizes of their messages and documents. */
  profile: OrderProfile;
}

/**
 * The hops an order made, as both the real order's profile and the shape's run count them. Not the function
 * executions: the orchestration's episodes among them depend on how its events fall together under load, and the
 * real order's include a share of the timers' ticks; both counts are reported side by side instead.
 */
export interface Hops {
  messagesPerOrder: number;
  deliveriesPerOrder: number;
  activitiesPerOrder: number;
  eventsRaisedPerOrder: number;
  remoteCallsPerOrder: number;
  /** Store requests by kind ("PUT doc state"), the metadata requests (query plans) left out. */
  storeRequestsPerOrder: Record<string, number>;
}

/** An order's hops, from its order profile and the remote calls it made (the real order's, or the shape's). */
export function hopsOf(
  profile: Pick<OrderProfile, "bus" | "durable" | "store">,
  remoteCallsPerOrder: number,
): Hops {
  return {
    messagesPerOrder: profile.bus.sentPerOrder,
    deliveriesPerOrder: profile.bus.deliveriesPerOrder,
    activitiesPerOrder: profile.durable.activitiesPerOrder,
    eventsRaisedPerOrder: profile.durable.eventsRaisedPerOrder,
    remoteCallsPerOrder,
    storeRequestsPerOrder: Object.fromEntries(
      profile.store.filter((s) => s.operation !== "metadata").map((s) => [s.kind, s.perOrder]),
    ),
  };
}

/**
 * Where the shape's hops differ from the real order's by half a hop or more: then the shape no longer stands
 * for the order (the app changed its hops, the shape did not follow) and what it measured would mislead.
 */
export function hopMismatches(shape: Hops, order: Hops): string[] {
  const { storeRequestsPerOrder: shapeStore, ...shapeRest } = shape;
  const { storeRequestsPerOrder: orderStore, ...orderRest } = order;
  const counted: Array<[string, number, number]> = [
    ...(Object.keys(orderRest) as Array<keyof typeof orderRest>).map((hop): [string, number, number] => [
      hop,
      shapeRest[hop],
      orderRest[hop],
    ]),
    ...[...new Set([...Object.keys(orderStore), ...Object.keys(shapeStore)])]
      .sort()
      .map((kind): [string, number, number] => [
        `store requests ${kind}`,
        shapeStore[kind] ?? 0,
        orderStore[kind] ?? 0,
      ]),
  ];
  return counted
    .filter(([, inShape, inOrder]) => Math.abs(inShape - inOrder) >= 0.5)
    .map(([hop, inShape, inOrder]) => `${hop}: the shape ${inShape}, the order ${inOrder}`);
}

/**
 * What the shape carries: the real order's documents and messages as the end-to-end run sampled them (its order
 * profile's payloads), one of each kind the shape writes or sends, and the claim queries its orders came with.
 */
export function shapePayloads(profile: Pick<OrderProfile, "payloads" | "store">): ShapePayloads {
  const missing = (what: string) =>
    new Error(`the order profile has no sampled ${what}: run endToEnd again (npm run bench)`);
  const sampled = profile.payloads;
  if (!sampled) throw missing("payloads");
  const documents = {} as ShapePayloads["documents"];
  for (const [part, kind] of Object.entries(DOCUMENT_KINDS) as Array<[ShapeDocumentKind, string]>) {
    const document = sampled.documents[kind];
    if (!document) throw missing(`document of ${kind}`);
    documents[part] = document;
  }
  const messages: ShapePayloads["messages"] = {};
  for (const queue of SHAPE_QUEUES) {
    const message = sampled.messages[queue];
    if (!message) throw missing(`message of ${queue}`);
    messages[queue] = message;
  }
  const claimQueriesPerOrder = profile.store.find((s) => s.kind === CLAIM_QUERY_KIND)?.perOrder ?? 0;
  return { documents, messages, claimQueriesPerOrder };
}

/** How far the shape's mean sizes may stray from the order's: its ids differ, and a sample is not the mean. */
const SIZE_TOLERANCE = 0.2;

/**
 * Where the shape's payloads are no longer about as large as the order's (messages, and each document kind it
 * writes): then its hops would cost what another order's cost.
 */
export function sizeMismatches(
  shape: Pick<OrderProfile, "bus" | "store">,
  order: Pick<OrderProfile, "bus" | "store">,
): string[] {
  const documentBytes = (p: Pick<OrderProfile, "store">, kind: string) =>
    p.store.find((s) => s.kind === kind)?.meanDocumentBytes ?? 0;
  const sizes: Array<[string, number, number]> = [
    ["mean message bytes", shape.bus.meanMessageBytes, order.bus.meanMessageBytes],
    ...Object.values(DOCUMENT_KINDS).map((kind): [string, number, number] => [
      `mean document bytes of ${kind}`,
      documentBytes(shape, kind),
      documentBytes(order, kind),
    ]),
  ];
  return sizes
    .filter(([, inShape, inOrder]) => Math.abs(inShape - inOrder) > SIZE_TOLERANCE * inOrder)
    .map(
      ([what, inShape, inOrder]) =>
        `${what}: the shape ${Math.round(inShape)}, the order ${Math.round(inOrder)}`,
    );
}

/**
 * The app's rate over the shape's in each pair of runs (the app's and the shape's, one right after the other), and their
 * median: `pairs`, `pair<n>.ratio` and `medianRatio` among the benchmark's figures.
 */
export function pairedRatios(pairs: ReadonlyArray<{ app: number; shape: number }>): Record<string, number> {
  // Three decimals: a target's verdict must not turn on a rounding (0.796 is not 0.8).
  const ratios = pairs.map((p) => round(p.app / p.shape, 3));
  const sorted = [...ratios].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  const figures: Record<string, number> = { pairs: pairs.length, medianRatio: round(median, 3) };
  pairs.forEach((p, i) => {
    figures[`pair${i + 1}.appOrdersPerSec`] = p.app;
    figures[`pair${i + 1}.shapeOrdersPerSec`] = p.shape;
    figures[`pair${i + 1}.ratio`] = ratios[i]!;
  });
  return figures;
}

/** The shape's remote service: answers every call at once, and counts them. */
async function startRemoteService(): Promise<{ url: string; calls(): number; stop(): Promise<void> }> {
  let calls = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      calls++;
      response.writeHead(200, { "content-type": "application/json" }).end(REMOTE_ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/service`,
    calls: () => calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Posts the orders, CONCURRENCY at a time, each with its body, as the end-to-end run posts the real ones. */
async function postAll(url: string, orders: readonly Order[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < orders.length) {
        const order = orders[next++]!;
        const orderId = order.orderId;
        const response = await fetch(`${url}/api/shape/${orderId}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(order),
          signal: AbortSignal.timeout(10_000),
        });
        await response.text();
        if (response.status !== 202)
          throw new Error(`order shape: POST ${orderId} answered ${response.status}`);
      }
    }),
  );
}

export async function benchOrderShape(options: OrderShapeOptions): Promise<Record<string, number>> {
  const bus = countServiceBus();
  const store = new StoreRequestCounter();
  const stack = await startLocalStack({
    onCosmosRequest: store.onRequest,
    onCosmosResponse: store.onResponse,
  });
  const remote = await startRemoteService();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-shape-"));
  const payloadsFile = path.join(dataDir, "payloads.json");
  fs.writeFileSync(payloadsFile, JSON.stringify(shapePayloads(options.profile)));
  const settings = stack.appSettings({
    [PAYLOADS_FILE_SETTING]: payloadsFile,
    [REMOTE_URL_SETTING]: remote.url,
  });
  const app = new AppProcess({ ...SHAPE_APP, dataDir, settings, ...cpuProfileOptions() });
  const statusesSent = () => bus.counts().sentByQueue[STATUS_QUEUE] ?? 0;
  /** Resolves once `orders` orders have sent all their status messages since the bus's counters were reset. */
  const through = async (orders: number) => {
    const until = Date.now() + THROUGH_TIMEOUT_MS;
    while (statusesSent() < orders * STATUSES_PER_ORDER) {
      if (Date.now() > until)
        throw new Error(
          `order shape: ${orders} orders not through in ${THROUGH_TIMEOUT_MS / 1000} s (${statusesSent()} of ${orders * STATUSES_PER_ORDER} status messages)`,
        );
      await sleep(100);
    }
  };
  try {
    await app.start();
    bus.reset();
    await postAll(app.url, sampleOrders(WARMUP_ORDERS, { prefix: "SHAPE-WARM" }));
    await through(WARMUP_ORDERS);
    await sleep(1_000);

    const orders = sampleOrders(options.orders, { prefix: "SHAPE" });
    const orderIds = orders.map((o) => o.orderId);
    bus.reset();
    store.reset();
    const callsBefore = remote.calls();
    const logOffset = fs.statSync(app.logFile).size;
    const cpu = cpuMeter(app.pid);
    const started = Date.now();
    await postAll(app.url, orders);
    await through(options.orders);
    const seconds = (Date.now() - started) / 1000;
    const { app: shapeCpu, bench: benchCpu } = cpu.perOrder(options.orders);
    const sent = bus.counts();
    const remoteCalls = (remote.calls() - callsBefore) / options.orders;
    await app.stop();

    const executions = functionExecutions(fs.readFileSync(app.logFile).subarray(logOffset).toString("utf8"));
    const durable = durableProfile(
      tallyTaskHub(path.join(dataDir, settings.TASK_HUB_NAME ?? "")),
      new Set(orderIds),
    );
    const measured = {
      bus: busProfile(sent, options.orders),
      durable,
      store: storeProfile(store.byKind, store.served, options.orders),
    };
    const hops = hopsOf(measured, remoteCalls);
    const orderHops = hopsOf(options.profile, callsPerOrder(options.profile).fetchCall);
    const mismatches = [...hopMismatches(hops, orderHops), ...sizeMismatches(measured, options.profile)];
    if (mismatches.length > 0)
      throw new Error(`the order shape no longer makes the real order's hops (${mismatches.join("; ")})`);
    const appCpu = options.profile.functions.appCpuMsPerOrder;
    const ordersPerSec = options.orders / seconds;
    const { storeRequestsPerOrder, ...counted } = hops;
    return {
      ordersPerSec: round(ordersPerSec, 1),
      ...counted,
      storeRequestsPerOrder: round(
        Object.values(storeRequestsPerOrder).reduce((sum, n) => sum + n, 0),
        2,
      ),
      orderStoreRequestsPerOrder: round(
        Object.values(orderHops.storeRequestsPerOrder).reduce((sum, n) => sum + n, 0),
        2,
      ),
      executionsPerOrder: functionsProfile(executions, options.orders, shapeCpu).executionsPerOrder,
      orderExecutionsPerOrder: options.profile.functions.executionsPerOrder,
      episodesPerOrder: durable.episodesPerOrder,
      orderEpisodesPerOrder: options.profile.durable.episodesPerOrder,
      meanMessageBytes: round(measured.bus.meanMessageBytes, 0),
      orderMeanMessageBytes: round(options.profile.bus.meanMessageBytes, 0),
      shapeCpuMsPerOrder: round(shapeCpu, 1),
      appCpuMsPerOrder: round(appCpu, 1),
      appAboveShapeCpuMsPerOrder: round(appCpu - shapeCpu, 1),
      // The benchmark's own process over the window, as the end-to-end run reports it for the app's.
      benchCpuMsPerOrder: round(benchCpu, 1),
    };
  } finally {
    await app.stop();
    await remote.stop();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));
