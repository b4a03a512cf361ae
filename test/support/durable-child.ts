// Runs the durable engine in a child process for the kill-and-restart test. The child needs JavaScript:
// the TypeScript sources it uses (the engine, the capture shim, the kill app and host) are transpiled
// file by file with the TypeScript compiler API into a temp directory (no type check, no shared dist/),
// and the child resolves packages through NODE_PATH.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const SOURCES = [
  "devhost/durable",
  "test/support/durable-capture.ts",
  "test/support/durable-kill-host.ts",
  "test/support/apps/durable-kill-app.ts",
];

/** Transpiles the child's sources; returns the directory holding the compiled tree. */
export function compileKillHost(): string {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "durable-child-"));
  const files: string[] = [];
  for (const source of SOURCES) {
    const abs = path.join(repoRoot, source);
    if (fs.statSync(abs).isDirectory()) {
      for (const f of fs.readdirSync(abs)) if (f.endsWith(".ts")) files.push(path.join(abs, f));
    } else {
      files.push(abs);
    }
  }
  for (const file of files) {
    const { outputText } = ts.transpileModule(fs.readFileSync(file, "utf8"), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    const target = path.join(outDir, path.relative(repoRoot, file)).replace(/\.ts$/, ".js");
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, outputText);
  }
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
    [path.join(compiledDir, "test/support/durable-kill-host.js"), dataDir],
    {
      env: { ...process.env, NODE_PATH: path.join(repoRoot, "node_modules"), DURABLE_KILL_LOG: logPath },
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
