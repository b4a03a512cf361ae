// Runs the durable engine in a child process for the kill-and-restart test: the sources the child uses (the
// engine, the capture shim, the kill app and host) transpiled into a temp directory, keeping their layout, with
// packages resolved through NODE_PATH.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { nodeModulesDir, PACKAGE_ROOT, transpileFiles, walk } from "./transpile";

const SOURCES = [
  "src/durable",
  "test/support/durableCapture.ts",
  "test/support/durableKillHost.ts",
  "test/support/apps/durableKillApp.ts",
];

/** Transpiles the child's sources; returns the directory holding the compiled tree. */
export function compileKillHost(): string {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "durable-child-"));
  const files = SOURCES.flatMap((source) => {
    const abs = path.join(PACKAGE_ROOT, source);
    return fs.statSync(abs).isDirectory() ? walk(abs) : [abs];
  });
  transpileFiles(files, PACKAGE_ROOT, outDir);
  return outDir;
}

export interface KillHost {
  process: ChildProcess;
  pid: number;
  baseUrl: string;
  /** Everything the child wrote to stderr (engine log lines). */
  stderr: () => string;
  exited: Promise<number | null>;
}

export async function spawnKillHost(
  compiledDir: string,
  dataDir: string,
  logPath: string,
): Promise<KillHost> {
  const child = spawn(
    process.execPath,
    [path.join(compiledDir, "test/support/durableKillHost.js"), dataDir],
    {
      env: { ...process.env, NODE_PATH: nodeModulesDir(), DURABLE_KILL_LOG: logPath },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`kill host did not start within 20 s; stderr:\n${stderr}`)),
      20_000,
    );
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`kill host exited with ${code} before it was ready; stderr:\n${stderr}`));
    });
  });
  return {
    process: child,
    pid: child.pid as number,
    baseUrl: `http://127.0.0.1:${port}`,
    stderr: () => stderr,
    exited,
  };
}
