/**
 * Apps shaped like the public Functions samples, run as a user runs them: a "main" glob with one function per
 * file, started from another folder, a function that crashes its worker, and an app on an older @azure/functions.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { APPS_DIR, buildCliCopy, startTestDevHost, type TestDevHost } from "../../support/devhost";
import { nodeModulesDir } from "../../support/transpile";

interface Running {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
}

function run(bin: string, args: string[], cwd: string): Running {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: "" } });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function hostUrl(running: Running): Promise<string> {
  return vi.waitFor(
    () => {
      const found = /Host started: (http:\/\/127\.0\.0\.1:\d+)/.exec(running.output());
      if (!found) throw new Error(`the devhost has not started:\n${running.output()}`);
      return found[1]!;
    },
    { timeout: 20_000, interval: 50 },
  );
}

describe("an app whose main is a glob, started from another folder", () => {
  let copy: { dir: string; bin: string };
  let running: Running;
  let url: string;

  beforeAll(async () => {
    copy = buildCliCopy();
    const appDir = path.join(APPS_DIR, "glob-main-app");
    // No --app: the entry is package.json "main" of the app, as the worker reads it; the CLI runs in the app's
    // folder (npm start), and the app's files are read from there.
    running = run(
      copy.bin,
      ["--no-emulators", "--port", "0", "--data-dir", path.join(copy.dir, "data")],
      appDir,
    );
    url = await hostUrl(running);
  });

  afterAll(async () => {
    if (running?.child.exitCode === null) {
      running.child.kill("SIGTERM");
      await new Promise((resolve) => running.child.once("exit", resolve));
    }
    if (copy) fs.rmSync(copy.dir, { recursive: true, force: true });
  });

  it("loads every file the pattern names, and runs the app in its own folder", async () => {
    expect(running.output()).toContain(`  greet: [GET] ${url}/api/greet`);
    expect(running.output()).toContain(`  crash: [GET] ${url}/api/crash`);
    const greet = await fetch(`${url}/api/greet`);
    expect(await greet.text()).toBe("Hello from the app root");
  });

  it("survives a function that crashes its worker: the invocation fails, the app is loaded again", async () => {
    expect(await (await fetch(`${url}/api/count`)).json()).toEqual({ count: 1 });
    expect(await (await fetch(`${url}/api/count`)).json()).toEqual({ count: 2 });
    const crashed = await fetch(`${url}/api/crash`);
    expect(crashed.status).toBe(500);
    expect(running.output()).toContain(
      "an uncaught exception in the app: Error: boom: thrown from a timer callback",
    );
    expect(running.output()).toMatch(/Executed 'Functions\.crash' \(Failed, Id=/);
    await vi.waitFor(() =>
      expect(running.output()).toContain("Worker restarted: the app registered 3 functions."),
    );
    // A new worker: module state starts again, and every function still answers.
    expect(await (await fetch(`${url}/api/count`)).json()).toEqual({ count: 1 });
    expect((await fetch(`${url}/api/greet`)).status).toBe(200);
    expect(running.child.exitCode).toBeNull();
  });
});

describe("the app entry", () => {
  it("names a pattern that matches nothing, or a file that does not exist, as the worker does", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-entry-"));
    try {
      fs.writeFileSync(path.join(dir, "host.json"), "{}");
      const host = (entry: string) =>
        startTestDevHost("http-app", {
          appEntryOverride: path.join(dir, entry),
          dataDir: path.join(dir, "d"),
        });
      await expect(host("dist/functions/*.js")).rejects.toThrow(
        `Unable to load the app entry "${path.join(dir, "dist/functions/*.js")}": found zero files matching the supplied pattern`,
      );
      await expect(host("dist/index.js")).rejects.toThrow(/dist\/index\.js": file does not exist/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("an app on @azure/functions 4.2, which reads the query from the host's map", () => {
  let host: TestDevHost;
  let appDir: string;

  beforeAll(async () => {
    // The app with its own node_modules/@azure/functions at 4.4.0, as if it had installed that version.
    appDir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-old-library-"));
    fs.cpSync(path.join(APPS_DIR, "old-library-app"), appDir, { recursive: true });
    fs.mkdirSync(path.join(appDir, "node_modules", "@azure"), { recursive: true });
    fs.symlinkSync(
      path.join(nodeModulesDir(), "@azure", "functions-4.2.0"),
      path.join(appDir, "node_modules", "@azure", "functions"),
      "dir",
    );
    host = await startTestDevHost("old-library-app", { appEntryOverride: path.join(appDir, "index.js") });
  });

  afterAll(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
    if (appDir) fs.rmSync(appDir, { recursive: true, force: true });
  });

  it("gets the query parameters", async () => {
    const res = await fetch(`${host.url}/api/hello?name=Ada`);
    expect(await res.json()).toEqual({ name: "Ada", library: "4.2.0" });
  });
});
