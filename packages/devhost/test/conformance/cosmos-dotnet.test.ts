// The Cosmos DB emulator against the real .NET SDK (Microsoft.Azure.Cosmos 3.64.0, Gateway mode over http):
// starts the emulator here, runs the xunit project in cosmos-dotnet/ with `dotnet test` (restore included), and
// requires every one of its tests to have run and passed. Without the .NET SDK on PATH it is skipped, so that
// `npm test` passes on a machine with only Node.js.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startCosmosEmulator,
  type CosmosEmulator,
  type CosmosEmulatorConfig,
} from "../../src/emulators/cosmos";
import { onPath, runCommand } from "../support/command";

const PROJECT_DIR = path.join(__dirname, "cosmos-dotnet");
const dotnet = onPath("dotnet");
if (!dotnet) {
  console.log("cosmos-dotnet conformance skipped: `dotnet` (the .NET 10 SDK) is not on PATH");
}

// Declared without a partition key kind, as an app's config usually is: the .NET tests read it back as Hash.
const CONFORMANCE_CONFIG: CosmosEmulatorConfig = {
  databases: [{ id: "conformance", containers: [{ id: "orders", partitionKey: { paths: ["/orderId"] } }] }],
};

/** Every [Fact] in the project's sources: the run must have executed exactly these. */
function declaredTests(): number {
  return fs
    .readdirSync(PROJECT_DIR)
    .filter((f) => f.endsWith(".cs"))
    .reduce(
      (n, f) => n + (fs.readFileSync(path.join(PROJECT_DIR, f), "utf8").match(/\[Fact\]/g) ?? []).length,
      0,
    );
}

interface TrxSummary {
  total: number;
  passed: number;
  failed: number;
  notPassed: string[];
}

/** The counters and the tests that did not pass, from a Visual Studio test results (.trx) file. */
function readTrx(file: string): TrxSummary {
  const xml = fs.readFileSync(file, "utf8");
  const counter = (name: string): number =>
    Number(new RegExp(`<Counters[^>]*\\s${name}="(\\d+)"`).exec(xml)?.[1] ?? NaN);
  const notPassed = [...xml.matchAll(/<UnitTestResult\b[^>]*>/g)]
    .map(([tag]) => ({
      name: /testName="([^"]*)"/.exec(tag)?.[1] ?? "?",
      outcome: /outcome="([^"]*)"/.exec(tag)?.[1] ?? "?",
    }))
    .filter((r) => r.outcome !== "Passed")
    .map((r) => `${r.name}: ${r.outcome}`);
  return { total: counter("total"), passed: counter("passed"), failed: counter("failed"), notPassed };
}

describe("the Cosmos DB emulator with the .NET SDK (Microsoft.Azure.Cosmos 3.64.0, Gateway mode)", () => {
  let emulator: CosmosEmulator | undefined;
  let resultsDir = "";

  beforeAll(async () => {
    if (!dotnet) return;
    emulator = await startCosmosEmulator({ port: 0, config: CONFORMANCE_CONFIG });
    resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), "cosmos-dotnet-"));
  });
  afterAll(async () => {
    await emulator?.stop();
    if (resultsDir) fs.rmSync(resultsDir, { recursive: true, force: true });
  });

  it.skipIf(!dotnet)(
    "passes every test of the xunit project (CRUD, conditions, patch, queries, databases and containers)",
    async () => {
      const [database] = CONFORMANCE_CONFIG.databases;
      const run = await runCommand(
        dotnet ?? "dotnet",
        [
          "test",
          path.join(PROJECT_DIR, "CosmosConformance.csproj"),
          "--nologo",
          // No MSBuild or compiler server may outlive the run (vitest would wait on nothing, CI on nothing either).
          "--disable-build-servers",
          "--logger",
          "trx;LogFileName=cosmos-dotnet.trx",
          "--results-directory",
          resultsDir,
          // bin/ and obj/ in the temporary folder too: a test run leaves nothing in the source tree (no build
          // output for the linters to find, no stale build from another branch).
          "--artifacts-path",
          path.join(resultsDir, "artifacts"),
        ],
        {
          cwd: PROJECT_DIR,
          timeoutMs: 230_000,
          env: {
            DOTNET_CLI_TELEMETRY_OPTOUT: "1",
            DOTNET_NOLOGO: "1",
            DOTNET_SKIP_FIRST_TIME_EXPERIENCE: "1",
            MSBUILDDISABLENODEREUSE: "1",
            COSMOS_ENDPOINT: emulator?.endpoint ?? "",
            COSMOS_KEY: emulator?.key ?? "",
            COSMOS_DATABASE: database?.id ?? "",
            COSMOS_CONTAINER: database?.containers[0]?.id ?? "",
          },
        },
      );
      const trx = path.join(resultsDir, "cosmos-dotnet.trx");
      const failure = `dotnet test exited ${run.exitCode}:\n${run.output}`;
      expect(fs.existsSync(trx), failure).toBe(true);
      const summary = readTrx(trx);
      expect(summary.notPassed, failure).toEqual([]);
      expect(run.exitCode, failure).toBe(0);
      expect({ total: summary.total, passed: summary.passed, failed: summary.failed }, failure).toEqual({
        total: declaredTests(),
        passed: declaredTests(),
        failed: 0,
      });
    },
    240_000,
  );
});
