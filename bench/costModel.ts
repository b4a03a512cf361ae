/**
 * What an order costs in Azure: the measured order profile (orderProfile.ts) priced with the rules and list
 * prices of azureRates.ts. Pure functions, no I/O: the benchmark calls them on its run's profile, and the docs
 * test on the profile kept in bench/results.json, so the cost section of docs/benchmarks.md always follows both.
 */
import { COSMOS_RULES as C, ORDER_RATES, PRICES as P, SERVICE_RULES as S, type Rate } from "./azureRates";
import type { DurableProfile, OrderProfile, StoreKindProfile } from "./orderProfile";
import type { CosmosCapacityMode } from "./shippedInfra";

const KB = 1024;
const value = (rate: Rate): number => {
  if (rate.value === null) throw new Error(`no value for ${rate.unit}`);
  return rate.value;
};

/**
 * How many times the 1 KB charge an item of `bytes` costs: 1 up to 1 KB, then a straight line through the
 * documented 100 KB point (10× for reads and for writes alike).
 */
export function sizeFactor(bytes: number, ratioAt100Kb: number): number {
  const kb = bytes / KB;
  return kb <= 1 ? 1 : 1 + ((kb - 1) * (ratioAt100Kb - 1)) / (100 - 1);
}

export const pointReadRu = (bytes: number): number =>
  value(C.pointReadRuAt1Kb) * sizeFactor(bytes, value(C.pointReadRuAt100Kb) / value(C.pointReadRuAt1Kb));

export const insertRu = (bytes: number): number =>
  value(C.insertRuAt1Kb) * sizeFactor(bytes, value(C.writeRuRatio100KbTo1Kb));

export const replaceRu = (bytes: number): number => value(C.replaceToInsert) * insertRu(bytes);

export const deleteRu = (bytes: number): number => value(C.deleteToInsert) * insertRu(bytes);

/** One query request returning `items` items of `itemBytes` each, on one physical partition. */
export const queryRu = (items: number, itemBytes: number): number =>
  value(C.queryRuPerRequest) + items * value(C.queryItemRu) * pointReadRu(itemBytes);

/** Mean size of the documents written to each container: what a delete there is taken to remove. */
function writtenBytesByContainer(store: readonly StoreKindProfile[]): Map<string, number> {
  const sums = new Map<string, { bytes: number; n: number }>();
  for (const row of store) {
    if (row.operation !== "create" && row.operation !== "replace") continue;
    const ok = row.perOrder - row.failedPerOrder;
    const sum = sums.get(row.container) ?? { bytes: 0, n: 0 };
    sum.bytes += row.meanDocumentBytes * ok;
    sum.n += ok;
    sums.set(row.container, sum);
  }
  return new Map([...sums].map(([container, { bytes, n }]) => [container, n > 0 ? bytes / n : 0]));
}

/** RU of one successful request of this kind, by the rules above. */
export function requestRu(row: StoreKindProfile, deletedBytes: number): number {
  switch (row.operation) {
    case "pointRead":
      return pointReadRu(row.meanDocumentBytes);
    case "create":
      return insertRu(row.meanDocumentBytes);
    case "replace":
      return replaceRu(row.meanDocumentBytes);
    case "delete":
      return deleteRu(deletedBytes);
    case "query":
      return queryRu(row.itemsPerRequest, row.meanDocumentBytes);
    case "metadata":
      return value(C.metadataRu);
  }
}

export interface RuLine {
  kind: string;
  container: string;
  perOrder: number;
  /** RU of one successful request. */
  ruEach: number;
  /** RU per order: successful requests at ruEach, refused ones at the refused-request charge. */
  ruPerOrder: number;
}

export function ruLines(store: readonly StoreKindProfile[]): RuLine[] {
  const written = writtenBytesByContainer(store);
  return store.map((row) => {
    const ruEach = requestRu(row, written.get(row.container) ?? 0);
    const failedRu = row.operation === "metadata" ? value(C.metadataRu) : value(C.failedRequestRu);
    return {
      kind: row.kind,
      container: row.container,
      perOrder: row.perOrder,
      ruEach,
      ruPerOrder: (row.perOrder - row.failedPerOrder) * ruEach + row.failedPerOrder * failedRu,
    };
  });
}

/** Billed Service Bus operations per order (Standard): sends, receives, settlements and lock renewals. */
export function serviceBusOpsPerOrder(bus: OrderProfile["bus"]): number {
  const perSend = Math.max(1, Math.ceil(bus.largestMessageBytes / value(S.serviceBusBytesPerOperation)));
  return (
    value(S.serviceBusOperation) *
    (bus.sentPerOrder * perSend +
      bus.deliveriesPerOrder +
      bus.completesPerOrder +
      bus.otherSettlementsPerOrder +
      bus.lockRenewalsPerOrder)
  );
}

/** Durable Task Scheduler actions per order, without and with the cancelled timers (the billing page is silent). */
export function dtsActionsPerOrder(d: DurableProfile): { low: number; high: number } {
  const low =
    d.instancesPerOrder * value(S.dtsActionPerStart) +
    d.activitiesPerOrder * value(S.dtsActionsPerActivity) +
    (d.timersFiredPerOrder + d.eventsRaisedPerOrder) * value(S.dtsActionPerTimerOrEvent);
  return { low, high: low + d.timersCancelledPerOrder * value(S.dtsActionPerTimerOrEvent) };
}

/** Azure Storage transactions per order of the default durable backend (the estimate rule of azureRates.ts). */
export function storageTransactionsPerOrder(d: DurableProfile): number {
  const messages =
    d.instancesPerOrder + 2 * d.activitiesPerOrder + d.eventsRaisedPerOrder + d.timersCreatedPerOrder;
  return (
    messages * value(S.storageTransactionsPerQueueMessage) +
    d.episodesPerOrder * value(S.storageTransactionsPerEpisode)
  );
}

/** GB-s of Flex Consumption per order: an instance's memory for as long as the order keeps it busy. */
export const flexGbSecondsPerOrder = (f: OrderProfile["functions"]): number =>
  (f.appCpuMsPerOrder / 1000) * value(S.flexInstanceMemoryGb);

export interface AtRate {
  ordersPerSec: number;
  /** Mean RU/s × headroom: what to provision. */
  provisionedRuPerSec: number;
  serviceBusOpsPerSec: number;
  premiumMessagingUnits: number;
  /** $ per million orders of Premium at this rate (whole MUs, kept busy at this rate). */
  premiumUsdPerMillionOrders: number;
  dtsActionsPerSec: number;
  dtsCapacityUnits: number;
}

export interface OrderCost {
  ruPerOrder: number;
  ruPerOrderByContainer: Record<string, number>;
  ruLines: RuLine[];
  serviceBusOpsPerOrder: number;
  dtsActionsPerOrder: { low: number; high: number };
  storageTransactionsPerOrder: number;
  functionExecutionsPerOrder: number;
  flexGbSecondsPerOrder: number;
  /** $ per million orders, each service on its own, at the prices of azureRates.ts; null where not priced. */
  usdPerMillionOrders: {
    cosmosServerless: number;
    cosmosProvisioned: number;
    serviceBusStandard: number;
    azureStorageBackend: number;
    durableTaskScheduler: number | null;
    flexConsumption: number;
    /** Autoscale throughput (COSMOS_CAPACITY_MODE=Provisioned) busy all hour at the order rate. */
    cosmosAutoscale: number;
    /** Autoscale Cosmos DB + Service Bus Standard + the Azure Storage backend + Flex Consumption. */
    withAutoscale: number;
    /** The same with serverless Cosmos DB (COSMOS_CAPACITY_MODE=Serverless). */
    withServerless: number;
    /** One of the two: the mode infra/main.bicep deploys when nobody chooses one. */
    shippedDefaults: number;
  };
  /** The Cosmos DB capacity mode of the shipped defaults. */
  shippedCosmosCapacityMode: CosmosCapacityMode;
  /** What autoscale costs when it is not busy, and where it starts to cost less than serverless. */
  autoscale: {
    /** The least it bills, every hour, at the smallest maximum (COSMOS_RULES.autoscaleSmallestMaximum). */
    floorUsdPerMonth: number;
    /** Orders a day that serverless would charge as much for as that floor: below it, serverless costs less. */
    serverlessBreakEvenOrdersPerDay: number;
    /** Orders/s that the smallest maximum serves; above it, raise cosmosAutoscaleMaxThroughput. */
    ordersPerSecAtSmallestMaximum: number;
  };
  atRates: AtRate[];
}

const MILLION = 1_000_000;
/** A month: 365 × 24 ÷ 12 hours. */
const HOURS_PER_MONTH = 730;
const price = (rate: Rate): number | null => rate.value;

export function orderCost(
  profile: OrderProfile,
  shippedCosmosCapacityMode: CosmosCapacityMode,
  rates: readonly number[] = ORDER_RATES,
): OrderCost {
  const lines = ruLines(profile.store);
  const ruPerOrder = lines.reduce((sum, l) => sum + l.ruPerOrder, 0);
  const ruPerOrderByContainer: Record<string, number> = {};
  for (const l of lines)
    if (l.ruPerOrder > 0)
      ruPerOrderByContainer[l.container] = (ruPerOrderByContainer[l.container] ?? 0) + l.ruPerOrder;
  const busOps = serviceBusOpsPerOrder(profile.bus);
  const dts = dtsActionsPerOrder(profile.durable);
  const storageTx = storageTransactionsPerOrder(profile.durable);
  const gbs = flexGbSecondsPerOrder(profile.functions);
  const executions = profile.functions.executionsPerOrder;
  const headroom = value(S.provisionedHeadroom);

  // Provisioned throughput bills RU/s by the hour: at a steady rate r, RU/order × r × headroom RU/s serves
  // r × 3,600 orders an hour, so the cost of a million orders does not depend on r.
  const cosmosProvisioned =
    ((ruPerOrder * headroom) / 100) * value(P.cosmosProvisionedPer100RuSecondHour) * (MILLION / 3600);
  // Autoscale bills each hour's highest RU/s at 1.5× the manual rate. Busy all hour at one rate, its highest RU/s is
  // the rate's, so a million orders again cost the same at any rate; no headroom, since it scales up by itself.
  const autoscalePer100RuSecondHour =
    value(P.cosmosProvisionedPer100RuSecondHour) * value(C.autoscaleRateToManual);
  const cosmosAutoscale = (ruPerOrder / 100) * autoscalePer100RuSecondHour * (MILLION / 3600);
  // Idle or not, it bills a tenth of its maximum every hour: where serverless would charge less than that floor
  // for a day's orders, serverless is the cheaper mode.
  const floorUsdPerHour =
    ((value(C.autoscaleSmallestMaximum) * value(C.autoscaleFloorShare)) / 100) * autoscalePer100RuSecondHour;
  const serverlessUsdPerOrder = (ruPerOrder * value(P.cosmosServerlessPerMillionRu)) / MILLION;
  const dtsPrice = price(P.dtsConsumptionPerMillionActions);
  const usd = {
    cosmosServerless: ruPerOrder * value(P.cosmosServerlessPerMillionRu),
    cosmosProvisioned,
    cosmosAutoscale,
    serviceBusStandard: busOps * value(P.serviceBusStandardPerMillionOps),
    azureStorageBackend: storageTx * MILLION * (value(P.storagePer10kTransactions) / 10_000),
    durableTaskScheduler: dtsPrice === null ? null : dts.low * dtsPrice,
    flexConsumption:
      executions * value(P.flexPerMillionExecutions) + gbs * MILLION * value(P.flexPerGbSecond),
  };
  // Everything but Cosmos DB, which the two capacity modes price differently.
  const rest = usd.serviceBusStandard + usd.azureStorageBackend + usd.flexConsumption;
  const atRates = rates.map((ordersPerSec): AtRate => {
    const opsPerSec = busOps * ordersPerSec;
    const mus = Math.max(1, Math.ceil(opsPerSec / value(S.serviceBusPremiumOpsPerMu)));
    const dtsPerSec = dts.low * ordersPerSec;
    return {
      ordersPerSec,
      provisionedRuPerSec: ruPerOrder * ordersPerSec * headroom,
      serviceBusOpsPerSec: opsPerSec,
      premiumMessagingUnits: mus,
      premiumUsdPerMillionOrders:
        ((mus * value(P.serviceBusPremiumPerMuHour)) / (ordersPerSec * 3600)) * MILLION,
      dtsActionsPerSec: dtsPerSec,
      dtsCapacityUnits: Math.ceil(dtsPerSec / value(S.dtsActionsPerSecondPerCu)),
    };
  });
  return {
    ruPerOrder,
    ruPerOrderByContainer,
    ruLines: lines,
    serviceBusOpsPerOrder: busOps,
    dtsActionsPerOrder: dts,
    storageTransactionsPerOrder: storageTx,
    functionExecutionsPerOrder: executions,
    flexGbSecondsPerOrder: gbs,
    usdPerMillionOrders: {
      ...usd,
      withAutoscale: usd.cosmosAutoscale + rest,
      withServerless: usd.cosmosServerless + rest,
      shippedDefaults:
        (shippedCosmosCapacityMode === "Provisioned" ? usd.cosmosAutoscale : usd.cosmosServerless) + rest,
    },
    shippedCosmosCapacityMode,
    autoscale: {
      floorUsdPerMonth: floorUsdPerHour * HOURS_PER_MONTH,
      serverlessBreakEvenOrdersPerDay: (floorUsdPerHour * 24) / serverlessUsdPerOrder,
      ordersPerSecAtSmallestMaximum: value(C.autoscaleSmallestMaximum) / ruPerOrder,
    },
    atRates,
  };
}
