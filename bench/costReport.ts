/**
 * The cost of an order as people read it: the section of docs/benchmarks.md between its generated markers, and
 * the table the benchmark prints. Pure: both are rendered from the order profile kept in bench/results.json
 * (under `cost`, or `small.cost` when only a `--small` run measured one) and the rules and prices of
 * azureRates.ts, so that a changed price or a new run changes the page, and the docs test notices a stale one.
 */
import { COSMOS_RULES, LOOKED_UP, PRICES, SERVICE_RULES, type Rate } from "./azureRates";
import { orderCost, type OrderCost } from "./costModel";
import type { OrderProfile } from "./orderProfile";
import { SHIPPED_COSMOS_CAPACITY_MODE } from "./shippedInfra";

/**
 * Per-order counts by name, the services' own queues (`<service>-requests`) or functions (`<service>Agent`) added
 * up under that pattern: the figures stay true of the process, and the docs name no service the declaration may
 * drop (test/unit/docs.test.ts).
 */
function byNameFoldingServices(
  counts: Record<string, number>,
  perService: RegExp,
  pattern: string,
  noun: string,
): string {
  const own = Object.entries(counts).filter(([name]) => perService.test(name));
  const rest = Object.entries(counts).filter(([name]) => !perService.test(name));
  const folded: [string, number][] =
    own.length > 0
      ? [[`\`${pattern}\` (${own.length} ${noun})`, own.reduce((sum, [, n]) => sum + n, 0)]]
      : [];
  return [...rest, ...folded]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${num(n, 2)}`)
    .join(", ");
}

/** What results.json keeps of a run's cost: the measured profile, and the cost worked out from it then. */
export interface CostEntry extends OrderCost {
  measuredOrderProfile: OrderProfile;
  measuredAt: string;
}

export function costEntry(profile: OrderProfile, measuredAt: Date): CostEntry {
  return {
    measuredOrderProfile: profile,
    measuredAt: measuredAt.toISOString(),
    ...orderCost(profile, SHIPPED_COSMOS_CAPACITY_MODE),
  };
}

/** The profile to render: the full run's if there is one, else the `--small` run's, saying which. */
export function costSource(results: unknown): { entry: CostEntry; small: boolean } | undefined {
  const r = results as { cost?: CostEntry; small?: { cost?: CostEntry } } | null;
  if (r?.cost?.measuredOrderProfile) return { entry: r.cost, small: false };
  if (r?.small?.cost?.measuredOrderProfile) return { entry: r.small.cost, small: true };
  return undefined;
}

const num = (n: number, digits = 1) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
const usd = (n: number | null) =>
  n === null
    ? "not priced"
    : `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
const rateValue = (r: Rate) => (r.value === null ? "—" : num(r.value, 6));
const link = (source: string) => source.replace(/(https:\/\/\S+)/g, "<$1>");

const otherMode = (c: OrderCost) =>
  c.shippedCosmosCapacityMode === "Provisioned" ? "Serverless" : "Provisioned";

/**
 * The sum at the shipped defaults, and the same with the other Cosmos DB capacity mode: busy all hour, autoscale
 * costs less; below the break-even, serverless does.
 */
function shippedAndOtherRows(c: OrderCost): string[][] {
  const usdOf = c.usdPerMillionOrders;
  const breakEven = `below about ${num(c.autoscale.serverlessBreakEvenOrdersPerDay, 0)} orders a day, serverless costs less than autoscale's floor`;
  const autoscale = c.shippedCosmosCapacityMode === "Provisioned";
  return [
    [
      `**The shipped defaults** (${autoscale ? "autoscale" : "serverless"}, Standard, Azure Storage backend, Flex)`,
      `**${usd(usdOf.shippedDefaults)}**`,
      autoscale ? `the sum of those four, busy all hour; ${breakEven}` : "the sum of those four",
    ],
    [
      `**The same with \`COSMOS_CAPACITY_MODE=${otherMode(c)}\`** (${autoscale ? "serverless for autoscale" : "autoscale for serverless"})`,
      `**${usd(autoscale ? usdOf.withServerless : usdOf.withAutoscale)}**`,
      autoscale ? "per request unit, nothing when idle" : `busy all hour; ${breakEven}`,
    ],
  ];
}

/** The section's body (between the markers of `cost` in docs/benchmarks.md). */
export function renderCostSection(entry: CostEntry, small: boolean): string {
  const p = entry.measuredOrderProfile;
  const c = orderCost(p, SHIPPED_COSMOS_CAPACITY_MODE);
  const date = entry.measuredAt.slice(0, 10);
  const by = c.ruPerOrderByContainer;
  const out: string[] = [];
  out.push(
    `### Measured on ${date}, ${num(p.orders, 0)} orders${small ? ", from a `--small` run (the full run's figures replace these)" : ""}`,
    "",
    "Generated from `bench/results.json` by `bench/costReport.ts` (`npm run bench` rewrites it on a full run, " +
      "`npm run docs:update` from the figures kept): do not edit. **Measured** figures are counted in the " +
      "emulators during the end-to-end run; **derived** ones are worked out from them with the rules below; a " +
      "rule or price marked *assumed* is in no stored Microsoft page.",
    "",
    table(
      ["Per order", "Value", "How"],
      [
        [
          "Request units",
          `**${num(c.ruPerOrder)} RU** (${Object.entries(by)
            .sort(([, a], [, b]) => b - a)
            .map(([k, v]) => `${k} ${num(v)}`)
            .join(", ")})`,
          "derived: each measured request kind × its RU rule (lower bound for indexed writes)",
        ],
        [
          "Service Bus operations",
          `**${num(c.serviceBusOpsPerOrder)}**`,
          `measured: ${num(p.bus.sentPerOrder)} sends + ${num(p.bus.deliveriesPerOrder)} receives + ${num(p.bus.completesPerOrder)} completes + ${num(p.bus.otherSettlementsPerOrder + p.bus.lockRenewalsPerOrder)} other settlements and lock renewals`,
        ],
        [
          "Durable Task Scheduler actions",
          `**${num(c.dtsActionsPerOrder.low)}**${c.dtsActionsPerOrder.high !== c.dtsActionsPerOrder.low ? ` (${num(c.dtsActionsPerOrder.high)} if cancelled timers count)` : ""}`,
          "derived: the documented rules applied to the measured task hub histories",
        ],
        [
          "Azure Storage transactions (default durable backend)",
          `**${num(c.storageTransactionsPerOrder, 0)}**`,
          "derived: assumed rule per queue message and per episode",
        ],
        [
          "Function executions",
          `**${num(c.functionExecutionsPerOrder)}**`,
          "measured: the devhost's `Executed` log lines, timers included",
        ],
        [
          "Flex Consumption GB-s",
          `**${num(c.flexGbSecondsPerOrder, 3)}**`,
          `derived: ${num(p.functions.appCpuMsPerOrder)} ms of app CPU × the instance's memory`,
        ],
      ],
    ),
    "",
    "#### Store requests",
    "",
    table(
      ["Kind", "Per order", "Refused (4xx)", "Mean document", "Items per query", "RU each", "RU per order"],
      p.store.map((row) => {
        const line = c.ruLines.find((l) => l.kind === row.kind);
        return [
          `\`${row.kind}\` (${row.operation})`,
          num(row.perOrder, 2),
          num(row.failedPerOrder, 2),
          row.meanDocumentBytes ? `${num(row.meanDocumentBytes, 0)} B` : "—",
          row.operation === "query" ? num(row.itemsPerRequest, 2) : "—",
          num(line?.ruEach ?? 0, 2),
          num(line?.ruPerOrder ?? 0, 2),
        ];
      }),
    ),
    "",
    "#### Messages, durable work and executions",
    "",
    table(
      ["Per order", "Value"],
      [
        [
          "sent, by queue",
          byNameFoldingServices(
            p.bus.sentByQueuePerOrder,
            /^[a-z]+-requests$/,
            "<service>-requests",
            "queues",
          ),
        ],
        [
          "message size, mean / largest",
          `${num(p.bus.meanMessageBytes, 0)} B / ${num(p.bus.largestMessageBytes, 0)} B`,
        ],
        ["duplicates dropped", num(p.bus.duplicatesPerOrder, 2)],
        [
          "orchestration instances, episodes (each replays the history)",
          `${num(p.durable.instancesPerOrder, 2)}, ${num(p.durable.episodesPerOrder, 2)}`,
        ],
        ["activities scheduled", num(p.durable.activitiesPerOrder, 2)],
        [
          "timers created / fired / cancelled",
          `${num(p.durable.timersCreatedPerOrder, 2)} / ${num(p.durable.timersFiredPerOrder, 2)} / ${num(p.durable.timersCancelledPerOrder, 2)}`,
        ],
        ["external events raised", num(p.durable.eventsRaisedPerOrder, 2)],
        [
          "executions by function",
          byNameFoldingServices(
            Object.fromEntries(
              Object.entries(p.functions.executionsByFunctionPerOrder).filter(([, n]) => n >= 0.01),
            ),
            /^[a-z]+Agent$/,
            "<service>Agent",
            "functions",
          ),
        ],
      ],
    ),
    "",
    "#### A million orders at list prices",
    "",
    "Each service on its own, per million orders, free grants and fixed base charges left out:",
    "",
    table(
      ["Service", "Per million orders", "From"],
      [
        [
          "Cosmos DB serverless",
          usd(c.usdPerMillionOrders.cosmosServerless),
          `${num(c.ruPerOrder)} RU × 1 M`,
        ],
        [
          "Cosmos DB provisioned (manual)",
          usd(c.usdPerMillionOrders.cosmosProvisioned),
          `${num(c.ruPerOrder)} RU × ${num(SERVICE_RULES.provisionedHeadroom.value)} headroom, busy all hour; independent of the rate`,
        ],
        [
          "Cosmos DB autoscale (`COSMOS_CAPACITY_MODE=Provisioned`)",
          usd(c.usdPerMillionOrders.cosmosAutoscale),
          `${num(c.ruPerOrder)} RU at ${num(COSMOS_RULES.autoscaleRateToManual.value)} × the manual rate, busy all hour; ` +
            `idle, it still bills a tenth of its maximum: ${usd(c.autoscale.floorUsdPerMonth)} a month at the smallest ` +
            `maximum, ${num(COSMOS_RULES.autoscaleSmallestMaximum.value, 0)} RU/s, which serves ` +
            `${num(c.autoscale.ordersPerSecAtSmallestMaximum)} orders/s`,
        ],
        [
          "Service Bus Standard",
          usd(c.usdPerMillionOrders.serviceBusStandard),
          `${num(c.serviceBusOpsPerOrder)} operations × 1 M`,
        ],
        [
          "Durable: Azure Storage backend",
          usd(c.usdPerMillionOrders.azureStorageBackend),
          `${num(c.storageTransactionsPerOrder, 0)} transactions × 1 M`,
        ],
        [
          "Durable: Task Scheduler, Consumption",
          usd(c.usdPerMillionOrders.durableTaskScheduler),
          "no price in the stored pages",
        ],
        [
          "Flex Consumption",
          usd(c.usdPerMillionOrders.flexConsumption),
          `${num(c.functionExecutionsPerOrder)} executions and ${num(c.flexGbSecondsPerOrder, 3)} GB-s × 1 M`,
        ],
        ...shippedAndOtherRows(c),
      ],
    ),
    "",
    "#### At 100, 1,000 and 10,000 orders/s",
    "",
    table(
      [
        "Orders/s",
        `RU/s to provision (× ${num(SERVICE_RULES.provisionedHeadroom.value)})`,
        "Service Bus operations/s",
        "Premium MUs (assumed capacity)",
        "Premium per million orders",
        "Scheduler actions/s",
        "Dedicated CUs",
      ],
      c.atRates.map((r) => [
        num(r.ordersPerSec, 0),
        num(r.provisionedRuPerSec, 0),
        num(r.serviceBusOpsPerSec, 0),
        num(r.premiumMessagingUnits, 0),
        usd(r.premiumUsdPerMillionOrders),
        num(r.dtsActionsPerSec, 0),
        num(r.dtsCapacityUnits, 0),
      ]),
    ),
    "",
    `#### Rules and prices (looked up ${LOOKED_UP})`,
    "",
    "Written once, in `bench/azureRates.ts`:",
    "",
    table(
      ["Rule or price", "Value", "Basis", "Source", "Note"],
      [...Object.values(COSMOS_RULES), ...Object.values(SERVICE_RULES), ...Object.values(PRICES)].map(
        (r: Rate) => [r.unit, rateValue(r), r.basis, link(r.source), r.note || "—"],
      ),
    ),
  );
  return out.join("\n");
}

/** The benchmark's console table of the same figures. */
export function costTableRows(c: OrderCost): string[][] {
  const rows: string[][] = [
    ["RU per order", num(c.ruPerOrder)],
    ["Service Bus operations per order", num(c.serviceBusOpsPerOrder)],
    [
      "Durable Task Scheduler actions per order",
      `${num(c.dtsActionsPerOrder.low)}–${num(c.dtsActionsPerOrder.high)}`,
    ],
    ["Azure Storage transactions per order", num(c.storageTransactionsPerOrder, 0)],
    ["function executions per order", num(c.functionExecutionsPerOrder)],
    ["Flex GB-s per order", num(c.flexGbSecondsPerOrder, 3)],
    [
      `$ per million orders, shipped defaults (${c.shippedCosmosCapacityMode === "Provisioned" ? "autoscale" : "serverless"})`,
      usd(c.usdPerMillionOrders.shippedDefaults),
    ],
    [
      `$ per million orders, COSMOS_CAPACITY_MODE=${otherMode(c)}`,
      usd(
        c.shippedCosmosCapacityMode === "Provisioned"
          ? c.usdPerMillionOrders.withServerless
          : c.usdPerMillionOrders.withAutoscale,
      ),
    ],
  ];
  for (const r of c.atRates)
    rows.push([`RU/s to provision at ${num(r.ordersPerSec, 0)} orders/s`, num(r.provisionedRuPerSec, 0)]);
  return rows;
}
