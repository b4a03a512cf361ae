/**
 * `npm run bench` (or `node dist/bench/main.js [--small]`): runs the named benchmarks in order, prints their
 * figures and the targets they are held to, and merges them into bench/results.json under each benchmark's
 * name (a `--small` run, the CI size, under `small` instead, so that it never replaces the full figures).
 * The end-to-end run's order profile is priced (costModel.ts) and kept under `cost`; a full run also rewrites
 * the generated cost section of docs/benchmarks.md from it. `--only a,b` runs some of them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { withGeneratedSections } from "../tools/docSections";
import { formatTable } from "../tools/table";
import { costEntry, costSource, costTableRows, renderCostSection, type CostEntry } from "./costReport";
import { benchDrain } from "./drain";
import { benchTelemetry } from "./telemetry";
import { benchEndToEnd } from "./endToEnd";
import { benchOrderShape, pairedRatios } from "./orderShape";
import { benchRecovery } from "./recovery";
import { benchServiceBus } from "./servicebus";
import { benchSdkCost } from "./sdkCost";
import { benchSteadyLoad } from "./steadyLoad";
import { benchSweep } from "./sweep";
import type { OrderProfile } from "./orderProfile";
import { targets, type Figures, type Results } from "./targets";

interface NamedBenchmark {
  name: string;
  /**
   * `earlier` holds the figures of the benchmarks that ran before this one in the same run; `profiled` takes
   * the order profile of a benchmark that measures one (endToEnd), to be priced.
   */
  run(options: {
    small: boolean;
    earlier: Results;
    profiled: (profile: OrderProfile) => void;
    /** This run's order profile if endToEnd ran, else the one bench/results.json keeps (full or small). */
    orderProfile: () => OrderProfile | undefined;
    /** A benchmark's figures from this run if it ran, else those bench/results.json keeps (full or small). */
    figuresOf: (name: string) => Figures | undefined;
  }): Promise<Figures>;
}

/**
 * Pairs of the app's and the shape's runs a full run measures (the first is endToEnd's and orderShape's own), each
 * of as many orders as those: the app's rate includes its admission's ramp and tail, which weigh more in a short run.
 * Every other pair runs the shape first: a machine that speeds up or slows down through the pairs then favours
 * neither side of the median. Five: one pair's ratio moved between 0.74 and 0.85 within an hour of 2026-12-04
 * (once to 0.59, the machine slow for a minute), and the median of three from 0.75 to 0.89 from run to run.
 */
const SHAPE_PAIRS = { full: 5, orders: 1_000 };

/** Orders of the unmeasured end-to-end run that warms the benchmark's process up before a full run measures. */
const WARM_UP_ORDERS = 300;

/** Store sizes for the sweep benchmark (docs/benchmarks.md, "Supervisor sweep"). */
const SWEEP_SIZES = { full: [1_000, 5_000, 10_000, 20_000, 50_000], small: [1_000, 5_000] };
const SWEEP_EXPIRED = 100;

/** Add new benchmarks here; each writes its own key of results.json. */
const benchmarks: NamedBenchmark[] = [
  {
    name: "servicebus",
    run: async ({ small }) => ({ ...(await benchServiceBus({ messages: small ? 500 : 5_000 })) }),
  },
  {
    name: "endToEnd",
    run: async ({ small, earlier, profiled }) => {
      const first = earlier.servicebus?.roundTripPerSec;
      if (!first) throw new Error("endToEnd needs the servicebus benchmark's roundTripPerSec");
      // A ceiling is the best the bus did: two more short runs, since one run varies by up to 2× on a busy machine.
      let busRoundTripPerSec = first;
      for (let i = 0; i < 2; i++)
        busRoundTripPerSec = Math.max(
          busRoundTripPerSec,
          (await benchServiceBus({ messages: 2_000 })).roundTripPerSec,
        );
      // The benchmark's own process (the emulators, the remote services) runs an order's hops for the first time
      // here, JIT-compiling them as it goes: the first end-to-end run of a full run was the slowest of its three
      // (50.3 against 53.0 and 51.9 orders/s; 58.4 against 65.2 and 67.4) while the shape's run after it did not
      // pay that. So a full run warms the process up first, with orders it does not measure.
      if (!small) await benchEndToEnd({ orders: WARM_UP_ORDERS, busRoundTripPerSec });
      const { figures, profile } = await benchEndToEnd({ orders: small ? 100 : 1_000, busRoundTripPerSec });
      profiled(profile);
      return { ...figures };
    },
  },
  // Right after endToEnd: the machine's speed drifts from minute to minute (the same app has measured 35 and 53
  // orders/s a few minutes apart), and the two rates are compared as a ratio. A full run then measures more pairs,
  // the shape first in every other one, and the target takes their median: one pair moves by about ±0.1 with the drift.
  {
    name: "orderShape",
    run: async ({ small, earlier, orderProfile, figuresOf }) => {
      const profile = orderProfile();
      if (!profile) throw new Error("orderShape needs endToEnd's order profile: run endToEnd first");
      const figures: Figures = { ...(await benchOrderShape({ orders: small ? 100 : 1_000, profile })) };
      const endToEnd = figuresOf("endToEnd");
      if (!endToEnd?.ordersPerSec || !endToEnd.busRoundTripPerSec) return figures;
      // The first pair is this run's end-to-end run and the shape right after it. With endToEnd's figures kept from
      // an earlier run (`--only orderShape`), that app ran on another day's machine: every pair is measured here.
      const pairs = earlier.endToEnd ? [{ app: endToEnd.ordersPerSec, shape: figures.ordersPerSec! }] : [];
      const busRoundTripPerSec = endToEnd.busRoundTripPerSec;
      let latest = profile;
      // Without this run's endToEnd before it, the first pair's app would be the process's first: warm up as a full
      // run does (both `--only orderShape` runs of 2026-12-04's afternoon had one of their two lowest ratios there).
      if (!small && pairs.length === 0) await benchEndToEnd({ orders: WARM_UP_ORDERS, busRoundTripPerSec });
      for (let i = pairs.length; i < (small ? 1 : SHAPE_PAIRS.full); i++) {
        const runApp = async () => {
          const app = await benchEndToEnd({
            orders: SHAPE_PAIRS.orders,
            busRoundTripPerSec,
          });
          latest = app.profile;
          return app.figures.ordersPerSec;
        };
        // The shape carries the payloads of the app's latest run (the one before it, when the shape goes first).
        const runShape = async () =>
          (await benchOrderShape({ orders: SHAPE_PAIRS.orders, profile: latest })).ordersPerSec!;
        const shapeFirst = i % 2 === 1;
        const first = shapeFirst ? await runShape() : await runApp();
        const second = shapeFirst ? await runApp() : await runShape();
        pairs.push(shapeFirst ? { app: second, shape: first } : { app: first, shape: second });
      }
      return { ...figures, ...pairedRatios(pairs) };
    },
  },
  {
    name: "steadyLoad",
    run: async ({ small, figuresOf }) => {
      const capacityOrdersPerSec = figuresOf("endToEnd")?.ordersPerSec;
      if (!capacityOrdersPerSec) throw new Error("steadyLoad needs endToEnd's orders/s: run endToEnd first");
      return { ...(await benchSteadyLoad({ capacityOrdersPerSec, seconds: small ? 15 : 60 })) };
    },
  },
  {
    name: "sdkCost",
    run: async ({ small, orderProfile }) => {
      const profile = orderProfile();
      if (!profile) throw new Error("sdkCost needs an order profile: run endToEnd first (npm run bench)");
      return { ...(await benchSdkCost({ calls: small ? 1_000 : 4_000, profile })) };
    },
  },
  {
    name: "drain",
    run: async ({ small }) => ({ ...(await benchDrain({ orders: small ? 100 : 1_000 })) }),
  },
  {
    name: "telemetry",
    run: async ({ small }) => ({ ...(await benchTelemetry({ orders: small ? 50 : 300 })) }),
  },
  {
    name: "recovery",
    run: async ({ small }) => ({ ...(await benchRecovery({ samples: small ? 2 : 5 })) }),
  },
  {
    name: "sweep",
    run: async ({ small }) => {
      const points = await benchSweep({
        sizes: small ? SWEEP_SIZES.small : SWEEP_SIZES.full,
        expired: SWEEP_EXPIRED,
        log: (line) => process.stdout.write(`  ${line}\n`),
      });
      const figures: Figures = { expired: SWEEP_EXPIRED };
      for (const p of points) {
        figures[`records${p.records}.recordsRead`] = p.recordsRead;
        figures[`records${p.records}.storeRequests`] = p.storeRequests;
        figures[`records${p.records}.sweepMs`] = p.sweepMs;
        figures[`records${p.records}.pointReadMs`] = p.pointReadMs;
        figures[`records${p.records}.replaceMs`] = p.replaceMs;
        figures[`records${p.records}.noticeStoreRequests`] = p.noticeStoreRequests;
        figures[`records${p.records}.noticeMs`] = p.noticeMs;
      }
      return figures;
    },
  },
];

async function main(argv: string[]): Promise<void> {
  const small = argv.includes("--small");
  const onlyIndex = argv.indexOf("--only");
  const only = onlyIndex >= 0 ? new Set((argv[onlyIndex + 1] ?? "").split(",")) : undefined;
  const results: Results = {};
  let cost: CostEntry | undefined;
  const profiled = (profile: OrderProfile) => {
    cost = costEntry(profile, new Date());
  };
  for (const benchmark of benchmarks) {
    if (only && !only.has(benchmark.name) && !(benchmark.name === "servicebus" && only.has("endToEnd")))
      continue;
    process.stdout.write(`running ${benchmark.name}${small ? " (small)" : ""}...\n`);
    const started = performance.now();
    results[benchmark.name] = await benchmark.run({
      small,
      earlier: results,
      profiled,
      orderProfile: () => cost?.measuredOrderProfile ?? keptProfile(small),
      figuresOf: (name) => results[name] ?? keptFigures(small, name),
    });
    process.stdout.write(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  printTable(results);
  if (cost)
    process.stdout.write(
      `\n${formatTable(["what an order costs in Azure", "value"], costTableRows(cost))}\n`,
    );
  // The figures this run did not measure are the kept ones: the table is whole after `--only`.
  const kept = keptRun(small) ?? {};
  const all = { ...(kept as Results), ...results };
  const checked = targets(all, cost ?? costSource(small ? { small: kept } : kept)?.entry);
  if (checked.length > 0) {
    process.stdout.write(
      `\n${formatTable(
        ["target", "this run", "met"],
        checked.map((t) => [t.target, t.figure, t.met === undefined ? "—" : t.met ? "yes" : "NO"]),
      )}\n`,
    );
  }
  const root = repositoryRoot(__dirname);
  const file = join(root, "bench", "results.json");
  const existing = readExisting(file);
  const base = small ? ((existing.small as Record<string, unknown> | undefined) ?? {}) : existing;
  const stamped = {
    ...base,
    ...results,
    ...(cost ? { cost } : {}),
    // Rewritten whole from the figures kept and measured: a retired target leaves with its row.
    targets: Object.fromEntries(checked.filter((t) => t.met !== undefined).map((t) => [t.target, t.met])),
    generatedAt: new Date().toISOString(),
  };
  const merged = small ? { ...existing, small: stamped } : stamped;
  writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
  process.stdout.write(`wrote ${file}${small ? ' (under "small")' : ""}\n`);
  // Only a full run's figures go into the documentation; a small run's stay in results.json.
  if (cost && !small) {
    const docs = join(root, "docs", "benchmarks.md");
    const text = readFileSync(docs, "utf8");
    writeFileSync(
      docs,
      withGeneratedSections(text, { cost: renderCostSection(cost, false) }, "docs/benchmarks.md"),
    );
    process.stdout.write(`rewrote the cost section of ${docs}\n`);
  }
}

function printTable(results: Results): void {
  const rows = Object.entries(results).flatMap(([name, figures]) =>
    Object.entries(figures).map(([metric, value]) => [name, metric, value.toLocaleString("en-US")]),
  );
  process.stdout.write(`\n${formatTable(["benchmark", "metric", "value"], rows)}\n`);
}

/** The nearest directory above `from` with a package.json: the repository, from src or from dist. */
function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The order profile bench/results.json keeps from an earlier run: a small run's for a small run. */
function keptProfile(small: boolean): OrderProfile | undefined {
  return (keptRun(small)?.cost as CostEntry | undefined)?.measuredOrderProfile;
}

/** A benchmark's figures bench/results.json keeps from an earlier run: a small run's for a small run. */
function keptFigures(small: boolean, name: string): Figures | undefined {
  return keptRun(small)?.[name] as Figures | undefined;
}

/** What bench/results.json keeps of the last full run, or of the last small one. */
function keptRun(small: boolean): Record<string, unknown> | undefined {
  const existing = readExisting(join(repositoryRoot(__dirname), "bench", "results.json"));
  return small ? (existing.small as Record<string, unknown> | undefined) : existing;
}

/** Figures of other benchmarks already recorded, kept as they are. */
function readExisting(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(`${file} is not a JSON object; fix or delete it`);
  }
  return parsed as Record<string, unknown>;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
