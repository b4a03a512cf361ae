// Whether the process a task hub lock names still runs, asked of real processes: one that runs, one that
// was killed and reaped (gone), one that was killed and not reaped (a zombie), and a pid that names a process
// other than the one recorded (a reused pid).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  currentProcessIdentity,
  isRunning,
  parseProcStat,
  type ProcessIdentity,
} from "../../../src/durable/processIdentity";
import { processState, spawnUnreaped, waitForProcessState } from "../../support/unreapedProcess";

const hasProc = fs.existsSync("/proc/self/stat");

/** Field 22 of /proc/<pid>/stat, read here without the code under test. */
const startTimeOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(
    stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .at(22 - 3),
  );
};

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** A Node process that idles until killed. */
function startIdleProcess(): ChildProcess & { pid: number } {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { stdio: "ignore" });
  children.push(child);
  if (child.pid === undefined) throw new Error("the idle process did not start");
  return child as ChildProcess & { pid: number };
}

describe("parseProcStat", () => {
  it("reads the state and start time after a command name that holds spaces and parentheses", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = "S";
    fields[22 - 3] = "987654";
    expect(parseProcStat(`4242 (my (odd) name) ${fields.join(" ")}\n`)).toEqual({
      state: "S",
      startTime: 987654,
    });
  });

  it("refuses text that is not a stat line", () => {
    expect(() => parseProcStat("")).toThrow(/Not the text of \/proc\/<pid>\/stat/);
    expect(() => parseProcStat("12 (node) S 1 2")).toThrow(/Not the text of \/proc\/<pid>\/stat/);
  });
});

describe("isRunning", () => {
  it("says a running process runs, named by its pid alone", () => {
    const child = startIdleProcess();
    expect(isRunning({ pid: child.pid })).toBe(true);
  });

  it("says a killed and reaped process does not", async () => {
    const child = startIdleProcess();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    expect(isRunning({ pid: child.pid })).toBe(false);
  });

  describe.skipIf(!hasProc)("with /proc (Linux; skipped elsewhere, where only kill(pid, 0) can tell)", () => {
    it("says a zombie (killed, its parent has not reaped it) does not run, though kill(pid, 0) reaches it", async () => {
      const zombie = await spawnUnreaped(process.execPath, ["-e", "setInterval(() => {}, 60_000)"]);
      try {
        const identity: ProcessIdentity = {
          pid: zombie.pid,
          startTime: startTimeOf(zombie.pid),
          bootId: currentProcessIdentity().bootId,
        };
        expect(isRunning(identity)).toBe(true);
        process.kill(zombie.pid, "SIGKILL");
        expect(await waitForProcessState(zombie.pid, "Z")).toBe("Z");
        expect(() => process.kill(zombie.pid, 0)).not.toThrow();
        expect(isRunning({ pid: zombie.pid })).toBe(false);
        expect(isRunning(identity)).toBe(false);
      } finally {
        await zombie.release();
      }
      expect(processState(zombie.pid)).toBeUndefined();
    });

    it("says a live pid recorded with another start time names a process that is gone (the pid was reused)", () => {
      const child = startIdleProcess();
      const { bootId } = currentProcessIdentity();
      const startTime = startTimeOf(child.pid);
      expect(isRunning({ pid: child.pid, startTime, bootId })).toBe(true);
      expect(isRunning({ pid: child.pid, startTime: startTime - 1, bootId })).toBe(false);
      // A lock file from a process that started before this one (the test's), under the child's pid.
      expect(isRunning({ ...currentProcessIdentity(), pid: child.pid })).toBe(false);
    });

    it("says a pid recorded in another boot names a process that is gone", () => {
      const child = startIdleProcess();
      const startTime = startTimeOf(child.pid);
      expect(isRunning({ pid: child.pid, startTime, bootId: "00000000-0000-0000-0000-000000000000" })).toBe(
        false,
      );
    });

    it("records this process's start time and boot", () => {
      const me = currentProcessIdentity();
      expect(me).toEqual({
        pid: process.pid,
        startTime: startTimeOf(process.pid),
        bootId: fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
      });
      expect(isRunning(me)).toBe(true);
    });
  });
});
