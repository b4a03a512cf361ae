/**
 * A fork of this repository in a temporary directory: what a team gets when it copies the project to change the
 * process. Its files are copies (edited freely, compared with the originals); its node_modules links to this
 * repository's packages, except the devhost, which is the fork's own package folder with the global setup's
 * transpiled output as its dist/ (so nothing needs `npm run build` first). It runs the fork's npm scripts, builds
 * the fork the way `npm start` loads it (dist/src, dist/tools, dist/browser; types stripped), and starts it with
 * `npm start`'s launcher on ports of its own.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { emitBrowserModules, transpile } from "./globalSetup";

const REPO = path.resolve(__dirname, "..", "..");
/** What a fork does not copy: installed packages, build output, local state, version control. */
const NOT_COPIED = new Set(["node_modules", "dist", ".test-build", ".git", ".azurite", "out"]);

export interface Fork {
  root: string;
  /** Reads a file of the fork. */
  read(file: string): string;
  write(file: string, text: string): void;
  /** The fork's files (relative paths) that differ from this repository's, or that it alone has. */
  changedFiles(): string[];
  /** Runs a command in the fork; resolves with its output, rejects with the output's tail on a non-zero exit. */
  run(command: string, args: string[], env?: Record<string, string>): Promise<string>;
  /** src/ and tools/ transpiled into dist/, and the dashboard's browser modules, as `npm start` finds them. */
  build(): void;
  /** Removes the fork. */
  remove(): void;
}

function copyTree(from: string, to: string): void {
  fs.cpSync(from, to, {
    recursive: true,
    filter: (source) => !NOT_COPIED.has(path.basename(source)),
  });
}

function walk(dir: string, root = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_COPIED.has(entry.name)) return [];
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) return [];
    return entry.isDirectory() ? walk(full, root) : [path.relative(root, full)];
  });
}

/** node_modules of the fork: a link to each installed package, the devhost its own folder (see above). */
function linkPackages(root: string): void {
  const modules = path.join(root, "node_modules");
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(REPO, "node_modules"))) {
    if (entry === "devhost") continue;
    fs.symlinkSync(path.join(REPO, "node_modules", entry), path.join(modules, entry));
  }
  const devhost = path.join(root, "packages", "devhost");
  fs.symlinkSync(path.join(inject("appBuildDir"), "devhost", "dist"), path.join(devhost, "dist"));
  fs.symlinkSync(devhost, path.join(modules, "devhost"));
}

/** Child processes of a test run inherit vitest's own variables; the fork's runs are a user's, not a worker's. */
function userEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of Object.keys(env)) {
    if (name.startsWith("VITEST") || ["TEST", "NODE_ENV", "NODE_OPTIONS"].includes(name)) delete env[name];
  }
  return env;
}

/** What a failed run said: its lines naming a failure (a test runner's FAIL lines), then its last lines. */
function summary(output: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const failures = [...new Set(plain.split("\n").filter((line) => /\bFAIL\b/.test(line)))];
  return [...failures, "…", plain.slice(-3000)].join("\n");
}

export function forkRepository(): Fork {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fork-"));
  copyTree(REPO, root);
  linkPackages(root);
  return {
    root,
    read: (file) => fs.readFileSync(path.join(root, file), "utf8"),
    write: (file, text) => fs.writeFileSync(path.join(root, file), text),
    changedFiles: () =>
      walk(root)
        .filter((file) => {
          const original = path.join(REPO, file);
          return (
            !fs.existsSync(original) ||
            !fs.readFileSync(original).equals(fs.readFileSync(path.join(root, file)))
          );
        })
        .sort(),
    run: (command, args, env = {}) =>
      new Promise((resolve, reject) => {
        const child = spawn(command, args, { cwd: root, env: userEnvironment(env) });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("error", reject);
        child.once("exit", (code) =>
          code === 0
            ? resolve(output)
            : reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${summary(output)}`)),
        );
      }),
    build() {
      for (const folder of ["src", "tools"]) {
        for (const file of walk(path.join(root, folder)).filter((f) => f.endsWith(".ts"))) {
          const out = path.join(root, "dist", folder, file.replace(/\.ts$/, ".js"));
          fs.mkdirSync(path.dirname(out), { recursive: true });
          fs.writeFileSync(out, transpile(path.join(root, folder, file)));
        }
      }
      emitBrowserModules(root, path.join(root, "dist", "browser"));
    },
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** A port nothing listens on right now (for settings that name one; the devhost's own HTTP port is 0). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface StartedFork {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

const HOST_STARTED = /Host started: (http:\/\/127\.0\.0\.1:\d+)/;

/**
 * `npm start` in the fork (its launcher, dist/tools/start.js: the simulator, then the devhost with its emulators),
 * with local.settings.json as the fork has it, on any free HTTP port. Resolves once the host has started.
 */
export async function startFork(fork: Fork, dataDir: string, timeoutMs = 60_000): Promise<StartedFork> {
  const child = spawn(
    process.execPath,
    [path.join(fork.root, "dist", "tools", "start.js"), "--port", "0", "--data-dir", dataDir],
    { cwd: fork.root, env: userEnvironment({}) },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killed);
    }
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const url = HOST_STARTED.exec(output)?.[1];
    if (url) return { url, output: () => output, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start in the fork did not start the host:\n${output.slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
