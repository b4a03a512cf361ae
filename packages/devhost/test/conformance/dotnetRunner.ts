/**
 * Runs `dotnet test` on a project and reads its TRX report: the vitest side of the .NET conformance suite.
 * What the tests check lives in the .NET project.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probe, runCommand } from "../support/command";

/** The .NET SDK's version, or undefined when `dotnet` is not on PATH (or does not run). */
export function dotnetSdkVersion(): string | undefined {
  return probe("dotnet", ["--version"], quietDotnetEnv());
}

export interface DotnetTestResult {
  exitCode: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
  total: number;
  passed: number;
  failed: number;
  /** Each test that did not pass, with its error message. */
  notPassed: { name: string; outcome: string; message: string }[];
}

/** `dotnet test` (restore and build included, in a temporary folder) with `env` added to the environment. */
export async function runDotnetTest(
  projectDir: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<DotnetTestResult> {
  const resultsDir = mkdtempSync(join(tmpdir(), "dotnet-conformance-"));
  const trxName = "results.trx";
  try {
    const args = ["test", projectDir, "--nologo", "--logger", `trx;LogFileName=${trxName}`];
    args.push("--results-directory", resultsDir);
    // bin/ and obj/ in the temporary folder too: a run leaves no build output in the source tree for the
    // linters to find, and never reuses a stale build from another branch.
    args.push("--artifacts-path", join(resultsDir, "artifacts"));
    // No MSBuild or compiler server may outlive the run: vitest, and CI after it, would wait on them.
    args.push("--disable-build-servers");
    const { exitCode, output } = await runCommand("dotnet", args, {
      env: { ...quietDotnetEnv(), MSBUILDDISABLENODEREUSE: "1", ...env },
      timeoutMs,
    });
    let trx = "";
    try {
      trx = readFileSync(join(resultsDir, trxName), "utf8");
    } catch {
      // no report: the build failed or the run was killed; the output says why
    }
    return { exitCode, output, ...parseTrx(trx) };
  } finally {
    rmSync(resultsDir, { recursive: true, force: true });
  }
}

/** The counters and the failures of a Visual Studio TRX report (the format `--logger trx` writes). */
export function parseTrx(trx: string): Omit<DotnetTestResult, "exitCode" | "output"> {
  const counters = /<Counters\b([^>]*)\/?>/.exec(trx)?.[1] ?? "";
  const count = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(counters)?.[1] ?? 0);
  const notPassed: DotnetTestResult["notPassed"] = [];
  for (const result of trx.matchAll(/<UnitTestResult\b([^>]*?)(?:\/>|>([\s\S]*?)<\/UnitTestResult>)/g)) {
    const attributes = result[1] ?? "";
    const outcome = /\boutcome="([^"]*)"/.exec(attributes)?.[1] ?? "";
    if (outcome === "Passed") continue;
    notPassed.push({
      name: unescapeXml(/\btestName="([^"]*)"/.exec(attributes)?.[1] ?? "?"),
      outcome,
      message: unescapeXml(/<Message>([\s\S]*?)<\/Message>/.exec(result[2] ?? "")?.[1] ?? ""),
    });
  }
  return { total: count("total"), passed: count("passed"), failed: count("failed"), notPassed };
}

/** No telemetry banner, first-run text or logo in the output that a failure shows. */
function quietDotnetEnv(): Record<string, string> {
  return { DOTNET_CLI_TELEMETRY_OPTOUT: "1", DOTNET_NOLOGO: "1", DOTNET_SKIP_FIRST_TIME_EXPERIENCE: "1" };
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}
