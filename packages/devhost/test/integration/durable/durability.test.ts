// The task hub survives its process: a clean restart (in process, virtual clock) and repeated SIGKILLs of a
// child process at arbitrary points (real clock) both resume every instance.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RealClock, VirtualClock } from "../../../src/durable";
import "../../support/durableCapture";
import { compileKillHost, spawnKillHost, type KillHost } from "../../support/durableChild";
import { startTestEngine, T0, tempDataDir } from "../../support/durableHost";

await import("../../support/apps/durableFeatures");

describe("real clock", () => {
  it("fires durable timers on wall-clock time, never early", async () => {
    const h = await startTestEngine({ clock: new RealClock() });
    try {
      const id = h.engine.startNew("F_Timer", { input: 150 });
      const status = await h.engine.waitForCompletion(id);
      const out = status.output as { before: string; after: string };
      expect(Date.parse(out.after) - Date.parse(out.before)).toBeGreaterThanOrEqual(150);
      await expect(h.engine.runUntilIdle()).rejects.toThrow(/needs a VirtualClock/);
    } finally {
      await h.dispose();
    }
  });
});

describe("restart in process", () => {
  it("resumes a pending timer, a buffered event and a queued entity signal after stop/start", async () => {
    const clock = new VirtualClock(T0);
    const dataDir = tempDataDir();
    try {
      const first = await startTestEngine({ clock, dataDir });
      const timer = first.engine.startNew("F_Timer", { instanceId: "r-timer", input: 60 * 60 * 1000 });
      const events = first.engine.startNew("F_Events", { instanceId: "r-events" });
      const done = first.engine.startNew("F_Deterministic", { instanceId: "r-done" });
      await first.engine.whenIdle();
      first.engine.raiseEvent(events, "Add", 5);
      first.engine.signalEntity({ name: "F_Account", key: "restart" }, "deposit", 42);
      const doneOutput = first.engine.getStatus(done)?.output;
      await first.stop();

      const second = await startTestEngine({ clock, dataDir });
      try {
        expect(second.engine.getStatus(done)).toMatchObject({
          runtimeStatus: "Completed",
          output: doneOutput,
        });
        second.engine.raiseEvent(events, "Add", 6);
        second.engine.raiseEvent(events, "Add", 7);
        await second.engine.runUntilIdle();
        expect(second.engine.getStatus(timer)?.runtimeStatus).toBe("Completed");
        expect(second.engine.getStatus(events)).toMatchObject({ runtimeStatus: "Completed", output: 18 });
        expect(second.engine.readEntityState({ name: "F_Account", key: "restart" }).state).toBe(42);
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses to open a task hub another engine holds", async () => {
    const h = await startTestEngine();
    try {
      await expect(startTestEngine({ dataDir: h.dataDir })).rejects.toThrow(/already open/);
    } finally {
      await h.dispose();
    }
  });
});

describe("SIGKILL at arbitrary points", () => {
  const INSTANCES = 6;
  const ids = Array.from({ length: INSTANCES }, (_, i) => `k-${i}`);
  let compiled: string;
  let dataDir: string;
  let logPath: string;
  let host: KillHost | undefined;

  beforeAll(() => {
    compiled = compileKillHost();
    dataDir = tempDataDir("durable-kill-");
    logPath = path.join(compiled, "activity.log");
  });
  afterAll(async () => {
    if (host && host.process.exitCode === null) {
      host.process.kill("SIGKILL");
      await host.exited;
    }
    fs.rmSync(compiled, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const logLines = (): Array<{ kind: string; key: string; pid: number }> =>
    (fs.existsSync(logPath) ? fs.readFileSync(logPath, "utf8") : "")
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [kind = "", key = "", pid = "0"] = l.split(" ");
        return { kind, key, pid: Number(pid) };
      });
  /** Activities this process started and never finished. */
  const unfinished = (pid: number): string[] => {
    const lines = logLines().filter((l) => l.pid === pid);
    const ended = new Set(lines.filter((l) => l.kind === "end").map((l) => l.key));
    return lines.filter((l) => l.kind === "start" && !ended.has(l.key)).map((l) => l.key);
  };
  const post = async (url: string, body?: unknown): Promise<number> =>
    (
      await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      })
    ).status;
  const kill = async (): Promise<void> => {
    host?.process.kill("SIGKILL");
    await host?.exited;
  };

  it("resumes every instance: interrupted activities run again, timers fire, queued events arrive", async () => {
    host = await spawnKillHost(compiled, dataDir, logPath);
    for (const id of ids)
      expect(await post(`${host.baseUrl}/durabletask/orchestrators/K_Workflow/${id}`, { id })).toBe(202);
    // Half of the "Go" events arrive long before the orchestrations wait for them.
    for (const id of ids.slice(0, INSTANCES / 2)) {
      expect(await post(`${host.baseUrl}/durabletask/instances/${id}/raiseEvent/Go`, `go ${id}`)).toBe(202);
    }

    const interrupted: Array<{ key: string; pid: number }> = [];
    let kills = 0;
    while (kills < 4 || interrupted.length === 0) {
      if (kills > 12) throw new Error("no SIGKILL landed while an activity was running");
      const pid = host.pid;
      if (interrupted.length === 0) {
        // Make sure at least one kill lands while an activity is in flight.
        const deadline = Date.now() + 5000;
        while (unfinished(pid).length === 0 && Date.now() < deadline) await sleep(5);
      } else {
        await sleep(100 + Math.floor(Math.random() * 400));
      }
      await kill();
      kills++;
      interrupted.push(...unfinished(pid).map((key) => ({ key, pid })));
      host = await spawnKillHost(compiled, dataDir, logPath);
      if (kills === 2) {
        for (const id of ids.slice(INSTANCES / 2)) {
          expect(await post(`${host.baseUrl}/durabletask/instances/${id}/raiseEvent/Go`, `go ${id}`)).toBe(
            202,
          );
        }
      }
    }

    const statusOf = async (id: string): Promise<{ runtimeStatus: string; output: unknown }> =>
      (await fetch(`${host?.baseUrl}/durabletask/instances/${id}`)).json() as Promise<{
        runtimeStatus: string;
        output: unknown;
      }>;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const statuses = await Promise.all(ids.map(statusOf));
      if (statuses.every((s) => s.runtimeStatus === "Completed")) break;
      if (Date.now() > deadline)
        throw new Error(`not all completed: ${JSON.stringify(statuses)}\n${host.stderr()}`);
      await sleep(50);
    }

    for (const id of ids) {
      expect(await statusOf(id)).toMatchObject({
        runtimeStatus: "Completed",
        output: {
          steps: [0, 1, 2].map((i) => `done ${id}/seq${i}`),
          fan: [0, 1, 2].map((j) => `done ${id}/fan${j}`),
          go: `go ${id}`,
          child: `done ${id}/child`,
          tallied: true,
        },
      });
    }
    // Entity operations are applied exactly once: each instance added 1.
    expect(await (await fetch(`${host.baseUrl}/durabletask/entities/K_Tally/all`)).json()).toBe(INSTANCES);
    // Every activity a kill interrupted ran again in a later process, to the end.
    expect(interrupted.length).toBeGreaterThan(0);
    const lines = logLines();
    for (const { key, pid } of interrupted) {
      expect(lines.some((l) => l.kind === "end" && l.key === key && l.pid !== pid)).toBe(true);
    }

    // A clean stop and one more start: completed instances stay completed and nothing runs again.
    host.process.kill("SIGTERM");
    expect(await host.exited).toBe(0);
    const before = lines.length;
    host = await spawnKillHost(compiled, dataDir, logPath);
    await sleep(300);
    expect((await Promise.all(ids.map(statusOf))).every((s) => s.runtimeStatus === "Completed")).toBe(true);
    expect(logLines().length).toBe(before);
    process.stdout.write(
      `durable kill test: ${kills} SIGKILLs, ${interrupted.length} interrupted activities re-run\n`,
    );
  }, 90_000);
});
