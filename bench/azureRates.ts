/**
 * Every Azure charging rule and list price the cost model (costModel.ts) uses, each written down once with where
 * it comes from and when it was looked up. `basis` says how far to trust it: "documented" is Microsoft's own
 * documentation, "third-party" a page that is not Microsoft's, "assumed" a figure no stored page gives (the
 * note says why this one). Prices are USD list prices for a US region; a price no page gave is left out (null)
 * rather than guessed. docs/benchmarks.md prints this table next to the cost, generated from here.
 */

export type Basis = "documented" | "third-party" | "assumed";

export interface Rate {
  /** null: no stored page gave a figure, and none is assumed. */
  value: number | null;
  unit: string;
  basis: Basis;
  source: string;
  note: string;
}

/** When the sources below were read. */
export const LOOKED_UP = "2026-12-01";

const COSMOS_REQUEST_COST = "https://learn.microsoft.com/azure/cosmos-db/optimize-cost-reads-writes";
const COSMOS_KEY_VALUE = "https://learn.microsoft.com/azure/cosmos-db/key-value-store-cost";
const COSMOS_BILL = "https://learn.microsoft.com/azure/cosmos-db/understand-your-bill";
const COSMOS_AUTOSCALE = "https://learn.microsoft.com/azure/cosmos-db/autoscale-faq";
const SERVICE_BUS_PRICING = "https://azure.microsoft.com/pricing/details/service-bus/";
const SERVICE_BUS_BILLING_2014 =
  "Microsoft's 'Service Bus pricing and billing' article (prices effective 1 November 2014), " +
  "as kept in Microsoft's documentation repositories";
const DTS_BILLING =
  "https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-billing";

/** How Cosmos DB charges: a request in request units (RU), and autoscale throughput by the hour. */
export const COSMOS_RULES = {
  pointReadRuAt1Kb: {
    value: 1,
    unit: "RU for a point read of an item of up to 1 KB",
    basis: "documented",
    source: COSMOS_REQUEST_COST,
    note: "the only factor besides the consistency level is the item's size; Session consistency (this app's) does not double it",
  },
  pointReadRuAt100Kb: {
    value: 10,
    unit: "RU for a point read of a 100 KB item",
    basis: "documented",
    source: COSMOS_REQUEST_COST,
    note: "sizes in between: a straight line between the two documented points (that line is the assumption)",
  },
  insertRuAt1Kb: {
    value: 5.5,
    unit: "RU to insert a 1 KB item without indexing",
    basis: "documented",
    source: COSMOS_REQUEST_COST,
    note: "a write of a larger item grows as a read does: 1 KB costs 5 RU and 100 KB 50 RU (10×) with indexing off, on the key-value cost page",
  },
  writeRuRatio100KbTo1Kb: {
    value: 10,
    unit: "× the 1 KB charge for a write of a 100 KB item",
    basis: "documented",
    source: COSMOS_KEY_VALUE,
    note: "5 RU at 1 KB, 50 RU at 100 KB, indexing off",
  },
  replaceToInsert: {
    value: 2,
    unit: "× the insert charge of the same item, for a replace",
    basis: "documented",
    source: COSMOS_REQUEST_COST,
    note: "writes also grow with the indexed properties, by an amount no page gives; `state` indexes every path but _etag, steps and history, so these write charges are a lower bound",
  },
  deleteToInsert: {
    value: 1,
    unit: "× the insert charge of the item, for a delete",
    basis: "assumed",
    source: "https://learn.microsoft.com/azure/cosmos-db/request-units",
    note: "the page says only that a delete consumes a variable number of RUs; the deleted item is taken at the mean size of its container's writes",
  },
  queryRuPerRequest: {
    value: 2.5,
    unit: "RU per query request per physical partition, before the items it returns",
    basis: "assumed",
    source: COSMOS_REQUEST_COST,
    note: "no page gives a minimum query charge (small queries are commonly seen at 2–3 RU); a COUNT is charged as one small item, though its real charge grows with the index entries it matches",
  },
  queryItemRu: {
    value: 1,
    unit: "× a point read of the same size, per item a query returns",
    basis: "documented",
    source: COSMOS_REQUEST_COST,
    note: "'if a query returns 1000 1-KB items, the cost of the operation is 1000'",
  },
  failedRequestRu: {
    value: 1,
    unit: "RU for a request refused with 4xx (a create that finds the item, a replace that lost its etag, a read of a missing item)",
    basis: "assumed",
    source: COSMOS_REQUEST_COST,
    note: "no page gives the charge of a refused request; taken as the smallest point read",
  },
  metadataRu: {
    value: 0,
    unit: "RU for metadata requests (account, containers, partition key ranges, query plans)",
    basis: "assumed",
    source: "https://learn.microsoft.com/azure/cosmos-db/concepts-limits",
    note: "they have limits of their own and are not billed as request units; the SDK makes them once per process and per query, not per document",
  },
  autoscaleRateToManual: {
    value: 1.5,
    unit: "× the manual rate per 100 RU/s, for autoscale throughput (single write region), billed on the highest RU/s of each hour",
    basis: "documented",
    source: COSMOS_AUTOSCALE,
    note: "autoscale is what the template creates unless COSMOS_CAPACITY_MODE=Serverless (shared by the database's containers)",
  },
  autoscaleFloorShare: {
    value: 0.1,
    unit: "× its maximum RU/s: the least autoscale bills each hour, with or without requests",
    basis: "documented",
    source: COSMOS_AUTOSCALE,
    note: "autoscale scales between a tenth of its maximum and the maximum",
  },
  autoscaleSmallestMaximum: {
    value: 1_000,
    unit: "RU/s: the smallest maximum autoscale may be given",
    basis: "documented",
    source: COSMOS_AUTOSCALE,
    note: "it then scales between 100 and 1,000 RU/s",
  },
} satisfies Record<string, Rate>;

/** How the other services count what they bill. */
export const SERVICE_RULES = {
  serviceBusOperation: {
    value: 1,
    unit: "Standard-tier operation per API call: each send, receive, complete, abandon, dead-letter and lock renewal",
    basis: "documented",
    source: SERVICE_BUS_PRICING,
    note: "'An operation is any API call to the Service Bus service'; receives that find nothing (idle polling) are operations too, but depend on idle time, not on orders, and are not counted here",
  },
  serviceBusBytesPerOperation: {
    value: 65_536,
    unit: "message bytes per billed operation",
    basis: "assumed",
    source: SERVICE_BUS_BILLING_2014,
    note: "the 2014 rule charged an extra message per 64 KB; every message measured here is far smaller, so it changes nothing",
  },
  serviceBusPremiumOpsPerMu: {
    value: 1_000,
    unit: "operations/s one Premium messaging unit (MU) is taken to sustain",
    basis: "assumed",
    source: "https://learn.microsoft.com/azure/service-bus-messaging/service-bus-throttling",
    note: "Microsoft publishes no throughput per MU (size by the CPU metric); taken as the Standard namespace's documented 1,000 credits/s, as a floor to replace with a load test",
  },
  dtsActionPerStart: {
    value: 1,
    unit: "Durable Task Scheduler action per orchestration start",
    basis: "documented",
    source: DTS_BILLING,
    note: "",
  },
  dtsActionsPerActivity: {
    value: 2,
    unit: "actions per activity: scheduling it and processing its result",
    basis: "documented",
    source: DTS_BILLING,
    note: "",
  },
  dtsActionPerTimerOrEvent: {
    value: 1,
    unit: "action per completed timer and per external event",
    basis: "documented",
    source: DTS_BILLING,
    note: "the page does not say whether a cancelled timer counts: the upper figure counts them too",
  },
  dtsActionsPerSecondPerCu: {
    value: 2_000,
    unit: "actions/s one Dedicated capacity unit (CU) dispatches; Consumption tops out at 500",
    basis: "documented",
    source: DTS_BILLING,
    note: "up to 3 CUs per scheduler",
  },
  storageTransactionsPerQueueMessage: {
    value: 3,
    unit: "Azure Storage transactions per task hub queue message: put, get, delete",
    basis: "assumed",
    source:
      "https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-azure-storage-provider",
    note: "the provider's page describes the queues and tables but no per-orchestration count; messages = 1 start + 2 per activity (work item and result) + 1 per event + 1 per timer created (a cancelled timer's message is still delivered)",
  },
  storageTransactionsPerEpisode: {
    value: 3,
    unit: "transactions per orchestrator episode: read the history, write the new history rows, update the instance row",
    basis: "assumed",
    source:
      "https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-azure-storage-provider",
    note: "extended sessions are off (host.json), so every episode reads its history again",
  },
  flexInstanceMemoryGb: {
    value: 2,
    unit: "GB of memory per Flex Consumption instance (2,048 MB, 1 core)",
    basis: "documented",
    source:
      "infra/main.bicep (instanceMemoryMB 2048); https://learn.microsoft.com/azure/azure-functions/flex-consumption-plan",
    note: "on-demand GB-s are the instance's memory × the time it executes anything; an instance is taken as busy for the app's CPU time per order (a saturated instance, as in the benchmark): the assumption",
  },
  telemetryBilledShare: {
    value: 0.75,
    unit: "× an Application Insights envelope's JSON bytes: the size Log Analytics bills for it",
    basis: "documented",
    source: "https://learn.microsoft.com/azure/azure-monitor/logs/cost-logs",
    note: "the billed size is worked out from the columns stored and is, across all event types, around 25% less than the incoming JSON-packaged event",
  },
  provisionedHeadroom: {
    value: 1.5,
    unit: "× the mean RU/s, provisioned",
    basis: "assumed",
    source: "this repository's planning rule",
    note: "room for bursts and for the write charges that indexing adds above the documented unindexed figures",
  },
} satisfies Record<string, Rate>;

/** List prices, USD. */
export const PRICES = {
  cosmosServerlessPerMillionRu: {
    value: 0.25,
    unit: "$ per million RU (serverless)",
    basis: "documented",
    source: COSMOS_BILL,
    note: "the page's serverless billing example: 500,000 RU × $0.25/million",
  },
  cosmosProvisionedPer100RuSecondHour: {
    value: 0.008,
    unit: "$ per 100 RU/s per hour (manual provisioned, single write region)",
    basis: "documented",
    source: COSMOS_BILL,
    note: "autoscale bills 1.5× this for the highest RU/s of each hour",
  },
  serviceBusStandardPerMillionOps: {
    value: 0.8,
    unit: "$ per million operations (Standard, 13–100 million a month)",
    basis: "assumed",
    source: `${SERVICE_BUS_BILLING_2014}; tiers as on ${SERVICE_BUS_PRICING}`,
    note: "the stored copy of the pricing page shows the tiers but no amounts; the 2014 amount is assumed unchanged (the larger tiers were $0.50 and $0.20); the base charge is fixed, not per order",
  },
  serviceBusPremiumPerMuHour: {
    value: 0.9275,
    unit: "$ per messaging unit per hour (Premium)",
    basis: "assumed",
    source: SERVICE_BUS_BILLING_2014,
    note: "$11.13 a day at a 50% preview discount, so $22.26 a day; no current amount in the stored pages",
  },
  flexPerGbSecond: {
    value: 0.000026,
    unit: "$ per GB-s of on-demand execution (Flex Consumption)",
    basis: "third-party",
    source: "https://modal.com/blog/azure-function-pricing-guide (May 2025, East US)",
    note: "Microsoft's pricing page amounts are not in the stored pages; the monthly free grant is left out (it does not scale with orders)",
  },
  flexPerMillionExecutions: {
    value: 0.4,
    unit: "$ per million executions (Flex Consumption, on demand)",
    basis: "assumed",
    source: "docs/deployment.md, 'Costs to expect', from the pricing page when it was written",
    note: "no stored page gives the amount; the free grant is left out",
  },
  storagePer10kTransactions: {
    value: 0.004,
    unit: "$ per 10,000 Azure Storage queue and table transactions",
    basis: "assumed",
    source: "https://azure.microsoft.com/pricing/details/storage/queues/",
    note: "no stored copy gives the amounts; third-party pages give $0.0004 per 10,000 for general-purpose v1 accounts; the higher, general-purpose v2 order of magnitude is taken",
  },
  logAnalyticsPerGb: {
    value: 2.3,
    unit: "$ per GB (10^9 bytes) ingested into Analytics Logs (Application Insights' workspace), pay-as-you-go",
    basis: "third-party",
    source: "https://monitoringcost.com/azure-monitor-cost",
    note: "the amounts of Microsoft's pricing page are not in the stored pages; docs/deployment.md gives the same figure; the 5 GB a month free and the 31 days of retention included are left out",
  },
  dtsConsumptionPerMillionActions: {
    value: null,
    unit: "$ per million actions (Durable Task Scheduler, Consumption)",
    basis: "assumed",
    source: DTS_BILLING,
    note: "the billing page points to the pricing page, whose amounts are in no stored page: not priced",
  },
} satisfies Record<string, Rate>;

/** The rates the cost is worked out at. */
export const ORDER_RATES = [100, 1_000, 10_000] as const;
