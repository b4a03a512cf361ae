/**
 * `npm run demo`: the whole local stack (Service Bus, Cosmos DB and the remote services in this process, the app
 * on the devhost in a child process, exactly as `npm start` runs it), 50 sample orders with a realistic mix of
 * faults, a live progress bar of the orders by state, then the final table and the ledger check. Exits 0 only if
 * every invariant holds. Options: --orders N, --seed N, --kills N (SIGKILL and restart the app N times), --keep.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { compiledDevhostCli } from "./appProcess";
import { DEMO_MIX } from "./soak/faultPlan";
import { progressBar } from "./soak/progress";
import { SOAK_TIMINGS, formatSoakSummary, runSoak, type SoakResult } from "./soak/soak";

const USAGE = `Usage: npm run demo -- [--orders N] [--seed N] [--kills N] [--keep]

  --orders N   orders to submit (default 50)
  --seed N     the fault plan's seed (default: random; printed, so a run can be replayed)
  --kills N    SIGKILL the app N times while orders are in flight, restarting it each time (default 0)
  --keep       keep the app's data directory (task hub, settings, app.log) instead of deleting it`;

function wholeNumber(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new Error(`--${name}: "${value}" is not a whole number from ${min} to ${max}`);
  return Number(value);
}

/** One compensated order's ledger, in the order the remote services saw the calls: the undo runs in reverse. */
function compensationExample(result: SoakResult): string[] {
  const compensated = result.records.find(
    (r) => r.processState === "Compensated" && r.steps.filter((s) => s.status === "Succeeded").length >= 2,
  );
  if (!compensated) return [];
  const entries = result.ledger.filter((e) => e.orderId === compensated.orderId);
  return [
    `Ledger of ${compensated.orderId} (Compensated), in the order the services applied it:`,
    ...entries.map(
      (e) =>
        `  ${e.idempotencyKey.slice(compensated.orderId.length + 1).padEnd(24)} ${`${e.service}/${e.operation}`.padEnd(18)} ${e.applied ? "applied" : `not applied (${e.status})`}${e.requests > 1 ? `, ${e.requests - 1} repeat(s) answered from the idempotency store` : ""}`,
    ),
  ];
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        orders: { type: "string" },
        seed: { type: "string" },
        kills: { type: "string" },
        keep: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let orders: number, seed: number, kills: number;
  try {
    orders = wholeNumber("orders", values.orders, 50, 1, 5_000);
    seed = wholeNumber("seed", values.seed, Math.floor(Math.random() * 1_000_000), 0, 2 ** 31 - 1);
    kills = wholeNumber("kills", values.kills, 0, 0, 20);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sas-demo-"));
  process.stdout.write(
    `Demo: ${orders} orders, fault plan seed ${seed} (--seed ${seed} replays it)${kills ? `, ${kills} app kill(s)` : ""}.\n` +
      `Emulators in this process; the app on the devhost in a child process (log: ${path.join(dataDir, "app.log")}).\n\n`,
  );
  const bar = progressBar();
  let result: SoakResult;
  try {
    result = await runSoak({
      orders,
      seed,
      mix: DEMO_MIX,
      prefix: `DEMO-${seed}`,
      kills,
      settings: SOAK_TIMINGS,
      cli: compiledDevhostCli(),
      appEntry: path.join(__dirname, "..", "src", "index.js"),
      dataDir,
      perSecond: 10,
      onProgress: (p) => bar.update(p),
      log: (line) => {
        if (/^kill/.test(line)) {
          bar.done();
          process.stdout.write(`${line}\n`);
        }
      },
    });
  } finally {
    bar.done();
  }
  process.stdout.write(`\n${formatSoakSummary(result, "Demo")}\n`);
  const example = compensationExample(result);
  if (example.length > 0) process.stdout.write(`\n${example.join("\n")}\n`);
  const ok = result.invariants.violations.length === 0;
  process.stdout.write(
    `\n${ok ? "Every invariant holds." : `${result.invariants.violations.length} invariant violation(s).`}\n`,
  );
  if (values.keep || !ok) process.stdout.write(`App data and log kept in ${dataDir}\n`);
  else fs.rmSync(dataDir, { recursive: true, force: true });
  return ok ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
