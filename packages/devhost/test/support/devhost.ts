// Starting the devhost in a test: a sample app from test/support/apps, a temp data directory, an ephemeral
// port, and the log records kept for assertions instead of printed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startDevHost, type DevHost, type DevHostOptions } from "../../src/host";
import type { LogRecord } from "../../src/logger";
import { nodeModulesDir, PACKAGE_ROOT, transpileFiles, walk } from "./transpile";

export const APPS_DIR = path.join(__dirname, "apps");

export function sampleApp(name: string): string {
  return path.join(APPS_DIR, name, "index.js");
}

export interface TestDevHost extends DevHost {
  logs: LogRecord[];
  dataDir: string;
  /** The log messages, one string each, for readable assertions. */
  lines(): string[];
}

export async function startTestDevHost(
  app: string,
  /** `appEntryOverride`: an entry elsewhere (a copy of the app, a pattern) instead of the app's index.js. */
  options: Partial<Omit<DevHostOptions, "appEntry">> & { appEntryOverride?: string } = {},
): Promise<TestDevHost> {
  const { appEntryOverride, ...hostOptions } = options;
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "devhost-test-"));
  const logs: LogRecord[] = [];
  const host = await startDevHost({
    port: 0,
    ...hostOptions,
    appEntry: appEntryOverride ?? sampleApp(app),
    dataDir,
    log: (record) => {
      logs.push(record);
      if (process.env.DEVHOST_TEST_LOGS) process.stdout.write(`${record.message}\n`);
    },
  });
  return { ...host, logs, dataDir, lines: () => logs.map((r) => r.message) };
}

/**
 * A runnable copy of the devhost CLI for child-process tests, laid out as the installed package is: src/**.ts
 * transpiled into `<dir>/dist`, bin/devhost.js copied to `<dir>/bin`, and the dependencies' node_modules linked.
 */
export function buildCliCopy(): { dir: string; bin: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-cli-"));
  const src = path.join(PACKAGE_ROOT, "src");
  transpileFiles(walk(src), src, path.join(dir, "dist"));
  fs.mkdirSync(path.join(dir, "bin"));
  fs.copyFileSync(path.join(PACKAGE_ROOT, "bin", "devhost.js"), path.join(dir, "bin", "devhost.js"));
  fs.symlinkSync(nodeModulesDir(), path.join(dir, "node_modules"), "dir");
  return { dir, bin: path.join(dir, "bin", "devhost.js") };
}
