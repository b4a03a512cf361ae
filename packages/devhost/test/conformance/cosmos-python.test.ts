// The Cosmos DB emulator against Python's azure-cosmos 3.1.1 (Debian bookworm's python3-azure-cosmos, the v3
// API): starts the emulator here, runs the unittest script in cosmos-python/, and requires every one of its
// tests to have run and passed. Skipped, with a line saying what is missing, when no python3 can import a 3.x
// azure.cosmos (Debian's package installs it for /usr/bin/python3 only, so that one is tried too).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startCosmosEmulator,
  type CosmosEmulator,
  type CosmosEmulatorConfig,
} from "../../src/emulators/cosmos";
import { onPath, runCommand } from "../support/command";

const SCRIPT = path.join(__dirname, "cosmos-python", "test_cosmos_conformance.py");

/** The first python3 whose azure.cosmos is a 3.x SDK, with that version; or why there is none. */
function findPython(): { python: string; version: string } | { missing: string } {
  const candidates = [...new Set([onPath("python3"), "/usr/bin/python3"])].filter(
    (p): p is string => p !== undefined && fs.existsSync(p),
  );
  if (candidates.length === 0) return { missing: "python3 is not on PATH" };
  const found: string[] = [];
  for (const python of candidates) {
    const probe = spawnSync(
      python,
      ["-B", "-c", "from azure.cosmos.http_constants import Versions; print(Versions.SDKVersion)"],
      { encoding: "utf8", timeout: 20_000 },
    );
    const version = probe.stdout?.trim() ?? "";
    if (probe.status === 0 && version.startsWith("3.")) return { python, version };
    if (probe.status === 0) found.push(`${python} has azure-cosmos ${version}`);
  }
  return {
    missing:
      found.length > 0
        ? `the script uses the azure-cosmos 3.x API; ${found.join(", ")}`
        : `no python3 (${candidates.join(", ")}) has the azure.cosmos module (Debian: apt-get install python3-azure-cosmos)`,
  };
}

const found = findPython();
const python = "python" in found ? found : undefined;
if ("missing" in found) console.log(`cosmos-python conformance skipped: ${found.missing}`);

// Declared without a partition key kind, as an app's config usually is: the script reads it back as Hash.
const CONFORMANCE_CONFIG: CosmosEmulatorConfig = {
  databases: [{ id: "conformance", containers: [{ id: "orders", partitionKey: { paths: ["/orderId"] } }] }],
};

describe("the Cosmos DB emulator with Python's azure-cosmos 3.1.1", () => {
  let emulator: CosmosEmulator | undefined;

  beforeAll(async () => {
    if (python) emulator = await startCosmosEmulator({ port: 0, config: CONFORMANCE_CONFIG });
  });
  afterAll(async () => {
    await emulator?.stop();
  });

  it.skipIf(!python)(
    `passes every test of the unittest script (CRUD, etag conditions, queries, databases and containers)${python ? ` with azure-cosmos ${python.version}` : ""}`,
    async () => {
      const [database] = CONFORMANCE_CONFIG.databases;
      const run = await runCommand(python?.python ?? "python3", ["-B", SCRIPT], {
        timeoutMs: 60_000,
        env: {
          COSMOS_ENDPOINT: emulator?.endpoint ?? "",
          COSMOS_KEY: emulator?.key ?? "",
          COSMOS_DATABASE: database?.id ?? "",
          COSMOS_CONTAINER: database?.containers[0]?.id ?? "",
        },
      });
      const failure = `python exited ${run.exitCode}:\n${run.output}`;
      const declared = (fs.readFileSync(SCRIPT, "utf8").match(/^\s+def test_/gm) ?? []).length;
      expect(run.exitCode, failure).toBe(0);
      expect(/^Ran (\d+) tests? in /m.exec(run.output)?.[1], failure).toBe(String(declared));
      expect(run.output.trimEnd().split("\n").at(-1), failure).toBe("OK");
    },
    90_000,
  );
});
