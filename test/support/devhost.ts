// Starting the devhost in a test: a sample app from test/support/apps, a temp data directory, an ephemeral
// port, and the log records kept for assertions instead of printed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startDevHost, type DevHost, type DevHostOptions, type LogRecord } from "../../devhost/host";

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
  options: Partial<Omit<DevHostOptions, "appEntry">> = {},
): Promise<TestDevHost> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "devhost-test-"));
  const logs: LogRecord[] = [];
  const host = await startDevHost({
    port: 0,
    ...options,
    appEntry: sampleApp(app),
    dataDir,
    log: (record) => {
      logs.push(record);
      if (process.env.DEVHOST_TEST_LOGS) process.stdout.write(`${record.message}\n`);
    },
  });
  return { ...host, logs, dataDir, lines: () => logs.map((r) => r.message) };
}

/**
 * A runnable copy of the devhost CLI for child-process tests: every devhost/**.ts transpiled (no type
 * check; `tsc --noEmit` does that) into `<dir>/dist/devhost`, bin/devhost.js copied to `<dir>/bin`, and the
 * project's node_modules linked. Leaves the repository's own dist/ alone, which other work may be rebuilding.
 */
export function buildCliCopy(): { dir: string; bin: string } {
  // Loaded lazily: only the CLI test needs the compiler.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ts = require("typescript") as typeof import("typescript");
  const repo = path.resolve(__dirname, "..", "..");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-cli-"));
  const walk = (from: string): string[] =>
    fs.readdirSync(from, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(from, entry.name);
      return entry.isDirectory() ? walk(full) : [full];
    });
  for (const file of walk(path.join(repo, "devhost"))) {
    const target = path.join(dir, "dist", path.relative(repo, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (file.endsWith(".ts") && !file.endsWith(".d.ts")) {
      const output = ts.transpileModule(fs.readFileSync(file, "utf8"), {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.Node16,
          moduleResolution: ts.ModuleResolutionKind.Node16,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
          resolveJsonModule: true,
        },
      });
      fs.writeFileSync(target.replace(/\.ts$/, ".js"), output.outputText);
    } else if (file.endsWith(".json")) {
      fs.copyFileSync(file, target);
    }
  }
  fs.mkdirSync(path.join(dir, "bin"));
  fs.copyFileSync(path.join(repo, "bin", "devhost.js"), path.join(dir, "bin", "devhost.js"));
  fs.symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"), "dir");
  return { dir, bin: path.join(dir, "bin", "devhost.js") };
}
