import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCliCopy, sampleApp } from "../../support/devhost";

interface Running {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}

function run(bin: string, args: string[], cwd: string): Running {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, NODE_OPTIONS: "" } });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitFor(running: Running, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = pattern.exec(running.output());
    if (found) return found;
    if (Date.now() > deadline || running.child.exitCode !== null) {
      throw new Error(`no ${String(pattern)} in the devhost's output:\n${running.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("devhost CLI", () => {
  let copy: { dir: string; bin: string };

  beforeAll(() => {
    copy = buildCliCopy();
  });

  afterAll(() => {
    if (copy) fs.rmSync(copy.dir, { recursive: true, force: true });
  });

  it("starts an app, lists its functions, logs invocations and stops cleanly on SIGINT", async () => {
    const dataDir = path.join(copy.dir, "data");
    const running = run(
      copy.bin,
      ["--app", sampleApp("http-app"), "--no-emulators", "--port", "0", "--data-dir", dataDir],
      copy.dir,
    );
    try {
      const [, url] = await waitFor(running, /Host started: (http:\/\/127\.0\.0\.1:\d+)/);
      const output = running.output();
      expect(output).toContain("Functions:");
      expect(output).toContain(`  hello: [GET,POST] ${url}/api/hello`);
      expect(output).toContain("  helloSequence: orchestrationTrigger");

      const response = await fetch(`${url}/api/hello?name=cli`);
      expect(await response.text()).toBe("Hello, cli!");
      await waitFor(running, /Executed 'Functions\.hello' \(Succeeded, Id=[0-9a-f-]{36}, Duration=\d+ms\)/);

      running.child.kill("SIGINT");
      expect(await running.exited).toBe(0);
      expect(running.output()).toContain("Host stopped.");
      expect(fs.existsSync(path.join(dataDir, "devhost"))).toBe(true);
    } finally {
      running.child.kill("SIGKILL");
    }
  });

  it("says how to build when the compiled devhost is missing", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-nobuild-"));
    try {
      fs.mkdirSync(path.join(empty, "bin"));
      fs.copyFileSync(copy.bin, path.join(empty, "bin", "devhost.js"));
      const running = run(path.join(empty, "bin", "devhost.js"), [], empty);
      expect(await running.exited).toBe(1);
      expect(running.output()).toContain("Run `npm run build` first.");
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it("rejects unknown options and bad ports with the usage text", async () => {
    const running = run(copy.bin, ["--port", "http"], copy.dir);
    expect(await running.exited).toBe(2);
    expect(running.output()).toContain('--port: "http" is not a port number');
    expect(running.output()).toContain("Usage: devhost [options]");
  });
});
