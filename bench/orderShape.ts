/**
 * What an order's shape costs on the devhost with the business taken out: the order-shape app
 * (orderShape/app.ts) makes the hops of one order of the real app (its function executions, durable actions and
 * messages) and nothing else, in a child process as the end-to-end run runs the real one. Its CPU per order,
 * plus what the store requests and remote calls of an order cost their caller (sdkCost), is the least the real
 * app could spend per order on the devhost while it keeps this shape: what is left above it is the app's own code.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { tallyTaskHub } from "devhost";
import { AppProcess, compiledDevhostCli } from "../tools/appProcess";
import { startLocalStack } from "../tools/localStack";
import { countServiceBus, cpuProfileOptions, functionExecutions, processCpuMs } from "./instrument";
import { busProfile, durableProfile, functionsProfile, type OrderProfile } from "./orderProfile";
import { MESSAGE_BYTES_SETTING, STATUS_QUEUE, STATUSES_PER_ORDER } from "./orderShape/shape";

const SHAPE_APP = {
  cli: compiledDevhostCli(),
  appEntry: path.join(__dirname, "orderShape", "app.js"),
};

/** Orders posted at once, as the end-to-end run posts the real ones. */
const CONCURRENCY = 16;
const WARMUP_ORDERS = 20;
/** Longest the shape's orders may take to get through; then the benchmark fails rather than hang. */
const THROUGH_TIMEOUT_MS = 300_000;

export interface OrderShapeOptions {
  orders: number;
  /** The end-to-end run's order profile: message sizes, and what the real order did besides its hops. */
  profile: OrderProfile;
  /** sdkCost's figures of the same run: what a store request and a remote call cost their caller. */
  sdkCost: Record<string, number>;
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
}

/** An order's hops, from its order profile's bus and durable work (the real order's, or the shape's). */
export function hopsOf(profile: Pick<OrderProfile, "bus" | "durable">): Hops {
  return {
    messagesPerOrder: profile.bus.sentPerOrder,
    deliveriesPerOrder: profile.bus.deliveriesPerOrder,
    activitiesPerOrder: profile.durable.activitiesPerOrder,
    eventsRaisedPerOrder: profile.durable.eventsRaisedPerOrder,
  };
}

/**
 * Where the shape's hops differ from the real order's by half a hop or more: then the shape no longer stands
 * for the order (the app changed its hops, the shape did not follow) and what it measured would mislead.
 */
export function hopMismatches(shape: Hops, order: Hops): string[] {
  return (Object.keys(order) as Array<keyof Hops>)
    .filter((hop) => Math.abs(shape[hop] - order[hop]) >= 0.5)
    .map((hop) => `${hop}: the shape ${shape[hop]}, the order ${order[hop]}`);
}

/** The store requests and remote calls of sdkCost's figures: what a real order does besides its hops. */
const BESIDES_THE_HOPS = [
  "storeCreate",
  "storeReplace",
  "storePointRead",
  "storeQuery",
  "fetchCall",
] as const;

/** What the calls an order makes besides its hops cost their caller, per order, from sdkCost's figures. */
export function besidesTheHopsCpuMs(sdkCost: Readonly<Record<string, number>>): number {
  return BESIDES_THE_HOPS.reduce((sum, call) => {
    const perCall = sdkCost[`${call}.cpuMsPerCall`];
    const perOrder = sdkCost[`${call}.callsPerOrder`];
    if (perCall === undefined || perOrder === undefined)
      throw new Error(`sdkCost's figures have no ${call}: run sdkCost again`);
    return sum + perCall * perOrder;
  }, 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function postAll(url: string, orderIds: string[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < orderIds.length) {
        const orderId = orderIds[next++]!;
        const response = await fetch(`${url}/api/shape/${orderId}`, { method: "POST", body: "{}" });
        await response.text();
        if (response.status !== 202)
          throw new Error(`order shape: POST ${orderId} answered ${response.status}`);
      }
    }),
  );
}

export async function benchOrderShape(options: OrderShapeOptions): Promise<Record<string, number>> {
  const bus = countServiceBus();
  const stack = await startLocalStack();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-shape-"));
  const settings = stack.appSettings({
    [MESSAGE_BYTES_SETTING]: String(Math.round(options.profile.bus.meanMessageBytes)),
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
    await postAll(
      app.url,
      Array.from({ length: WARMUP_ORDERS }, (_, i) => `SHAPE-WARM-${i}`),
    );
    await through(WARMUP_ORDERS);
    await sleep(1_000);

    const orderIds = Array.from({ length: options.orders }, (_, i) => `SHAPE-${i}`);
    bus.reset();
    const logOffset = fs.statSync(app.logFile).size;
    const cpuBefore = processCpuMs(app.pid);
    const started = Date.now();
    await postAll(app.url, orderIds);
    await through(options.orders);
    const seconds = (Date.now() - started) / 1000;
    const cpuAfter = processCpuMs(app.pid);
    const sent = bus.counts();
    await app.stop();

    const executions = functionExecutions(fs.readFileSync(app.logFile).subarray(logOffset).toString("utf8"));
    const durable = durableProfile(
      tallyTaskHub(path.join(dataDir, settings.TASK_HUB_NAME ?? "")),
      new Set(orderIds),
    );
    const shapeCpu =
      cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / options.orders : NaN;
    const hops = hopsOf({ bus: busProfile(sent, options.orders), durable });
    const mismatches = hopMismatches(hops, hopsOf(options.profile));
    if (mismatches.length > 0)
      throw new Error(`the order shape no longer makes the real order's hops (${mismatches.join("; ")})`);
    const besides = besidesTheHopsCpuMs(options.sdkCost);
    const appCpu = options.profile.functions.appCpuMsPerOrder;
    const floor = shapeCpu + besides;
    const ordersPerSec = options.orders / seconds;
    return {
      ordersPerSec: round(ordersPerSec, 1),
      ...hops,
      executionsPerOrder: functionsProfile(executions, options.orders, shapeCpu).executionsPerOrder,
      orderExecutionsPerOrder: options.profile.functions.executionsPerOrder,
      episodesPerOrder: durable.episodesPerOrder,
      orderEpisodesPerOrder: options.profile.durable.episodesPerOrder,
      shapeCpuMsPerOrder: round(shapeCpu, 1),
      besidesTheHopsCpuMsPerOrder: round(besides, 1),
      floorCpuMsPerOrder: round(floor, 1),
      appCpuMsPerOrder: round(appCpu, 1),
      appAboveFloorCpuMsPerOrder: round(appCpu - floor, 1),
    };
  } finally {
    await app.stop();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));
