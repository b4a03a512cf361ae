import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess as run, waitForOutput as waitFor } from "../../support/cliProcess";
import { buildCliCopy, sampleApp } from "../../support/devhost";
import { processState, spawnUnreaped, waitForProcessState } from "../../support/unreapedProcess";

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

  // Skipped without /proc (macOS, Windows): there is no zombie to see there, and the lock can only ask
  // kill(pid, 0), which takes a zombie for a running process.
  it.skipIf(!fs.existsSync("/proc/self/stat"))(
    "starts again on the task hub of a devhost that was SIGKILLed and is still a zombie (not yet reaped)",
    async () => {
      const dataDir = fs.mkdtempSync(path.join(copy.dir, "restart-data-"));
      const lockFile = path.join(dataDir, "devhost", "LOCK");
      const lockOwner = (): unknown =>
        (JSON.parse(fs.readFileSync(lockFile, "utf8")) as { pid: unknown }).pid;
      const args = ["--app", sampleApp("http-app"), "--no-emulators", "--port", "0", "--data-dir", dataDir];
      const killed = await spawnUnreaped(process.execPath, [copy.bin, ...args], {
        cwd: copy.dir,
        env: { ...process.env, NODE_OPTIONS: "" },
      });
      let refused: ReturnType<typeof run> | undefined;
      let restarted: ReturnType<typeof run> | undefined;
      try {
        const [, firstUrl] = await waitFor(
          { output: killed.output, child: killed.parent },
          /Host started: (http:\/\/127\.0\.0\.1:\d+)/,
        );
        expect(await (await fetch(`${firstUrl}/api/hello?name=first`)).text()).toBe("Hello, first!");
        expect(lockOwner()).toBe(killed.pid);

        refused = run(copy.bin, args, copy.dir);
        expect(await refused.exited).toBe(1);
        expect(refused.output()).toContain(
          `devhost could not start: Task hub ${path.join(dataDir, "devhost")} is in use by process ${killed.pid}. ` +
            "Stop that process first, or use another data directory.",
        );

        process.kill(killed.pid, "SIGKILL");
        expect(await waitForProcessState(killed.pid, "Z")).toBe("Z");
        expect(lockOwner()).toBe(killed.pid); // a kill leaves the lock file behind

        restarted = run(copy.bin, args, copy.dir);
        const [, url] = await waitFor(restarted, /Host started: (http:\/\/127\.0\.0\.1:\d+)/);
        expect(await (await fetch(`${url}/api/hello?name=again`)).text()).toBe("Hello, again!");
        expect(lockOwner()).toBe(restarted.child.pid);
        // The hub was taken over while its killed owner was still a zombie, not after someone reaped it.
        expect(processState(killed.pid)).toBe("Z");

        restarted.child.kill("SIGINT");
        expect(await restarted.exited).toBe(0);
        expect(fs.existsSync(lockFile)).toBe(false);
      } finally {
        refused?.child.kill("SIGKILL");
        restarted?.child.kill("SIGKILL");
        await killed.release();
      }
      expect(processState(killed.pid)).toBeUndefined(); // reaped by its own parent at last
    },
    60_000, // three starts of the devhost
  );

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

  describe("a refused start exits at once, with code 1, and leaves nothing listening", () => {
    /** True when something accepts connections on 127.0.0.1:<port>. */
    const listening = (port: number): Promise<boolean> =>
      new Promise((resolve) => {
        const socket = net.connect(port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });

    /**
     * Runs the streaming sample app to a refusal. Its HTTP server of the worker is started by @azure/functions as the
     * app loads (ProgrammingModel.ts getCapabilities, http/httpProxy.ts setupHttpProxy), before the phases that
     * fail here, and the library has no way to close it: only the process's exit does.
     */
    async function refusedStart(args: string[], env: Record<string, string> = {}): Promise<string> {
      const dataDir = path.join(copy.dir, "refused-data");
      const running = run(
        copy.bin,
        ["--app", sampleApp("http-stream-app"), "--no-emulators", "--data-dir", dataDir, ...args],
        copy.dir,
        env,
      );
      const exitedInTime = await Promise.race([
        running.exited.then((code) => ({ code })),
        new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 15_000)),
      ]);
      running.child.kill("SIGKILL");
      expect(exitedInTime, running.output()).toEqual({ code: 1 });
      const [, workerPort] =
        /worker's HTTP server at http:\/\/localhost:(\d+)\//.exec(running.output()) ?? [];
      expect(workerPort, running.output()).toBeDefined();
      expect(await listening(Number(workerPort))).toBe(false);
      return running.output();
    }

    it("when the port is taken", async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      try {
        const port = (taken.address() as net.AddressInfo).port;
        const output = await refusedStart(["--port", String(port)]);
        expect(output).toContain("devhost could not start");
        expect(output).toContain("EADDRINUSE");
      } finally {
        taken.close();
      }
    });

    it("when a setting is wrong", async () => {
      // A limit the host would take and then fail every request with (an unparsable one it ignores).
      const output = await refusedStart(["--port", "0"], { FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "-1" });
      expect(output).toContain(
        'devhost could not start: FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "-1" is negative',
      );
    });
  });
});
