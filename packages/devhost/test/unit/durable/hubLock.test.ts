// The task hub's LOCK file: what it records, which owners it yields to, which it takes over from, and the
// lock files of older devhosts (a bare pid).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HubLock, LOCK_FILE, parseLockFile } from "../../../src/durable/hubLock";
import { currentProcessIdentity } from "../../../src/durable/processIdentity";
import { spawnUnreaped, waitForProcessState } from "../../support/unreapedProcess";

const hasProc = fs.existsSync("/proc/self/stat");

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const hubDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hub-lock-"));
  dirs.push(dir);
  return dir;
};
const lockText = (dir: string): string => fs.readFileSync(path.join(dir, LOCK_FILE), "utf8");

/** A Node process that idles until killed. */
function startIdleProcess(): ChildProcess & { pid: number } {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { stdio: "ignore" });
  children.push(child);
  if (child.pid === undefined) throw new Error("the idle process did not start");
  return child as ChildProcess & { pid: number };
}

/** Takes the lock, checks that the file now names this process, and releases it. */
function takeOver(dir: string): void {
  const lock = HubLock.acquire(dir);
  expect(parseLockFile(lockText(dir))?.pid).toBe(process.pid);
  lock.release();
}

describe("parseLockFile", () => {
  it("reads the identity this version writes, and the bare pid older devhosts write", () => {
    expect(parseLockFile('{"pid":42,"startTime":1234,"bootId":"b-1"}')).toEqual({
      pid: 42,
      startTime: 1234,
      bootId: "b-1",
    });
    expect(parseLockFile('{"pid":42}')).toEqual({ pid: 42 });
    expect(parseLockFile("42")).toEqual({ pid: 42 });
    expect(parseLockFile("42\n")).toEqual({ pid: 42 });
  });

  it("names no owner for an empty or torn file, or one without a valid pid", () => {
    for (const text of ["", '{"pid":4', "0", "-3", "4.5", '{"pid":"42"}', "null", "[42]"]) {
      expect(parseLockFile(text), text).toBeUndefined();
    }
  });
});

describe("HubLock", () => {
  it("records this process and removes the file on release", () => {
    const dir = hubDir();
    const lock = HubLock.acquire(dir);
    expect(parseLockFile(lockText(dir))).toEqual(currentProcessIdentity());
    lock.release();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });

  it("refuses a hub a running process holds, saying which process and what to do", () => {
    const dir = hubDir();
    const { pid } = startIdleProcess();
    fs.writeFileSync(path.join(dir, LOCK_FILE), String(pid));
    expect(() => HubLock.acquire(dir)).toThrow(
      `Task hub ${dir} is in use by process ${pid}. Stop that process first, or use another data directory. ` +
        `If process ${pid} is not a devhost, delete ${path.join(dir, LOCK_FILE)}.`,
    );
    expect(lockText(dir)).toBe(String(pid));
  });

  it("takes over from an owner that is gone, in either format", async () => {
    const child = startIdleProcess();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    for (const stale of [String(child.pid), JSON.stringify({ pid: child.pid, startTime: 1, bootId: "b" })]) {
      const dir = hubDir();
      fs.writeFileSync(path.join(dir, LOCK_FILE), stale);
      takeOver(dir);
    }
  });

  it("takes over from a lock file that names no owner (cut short by a kill)", () => {
    const dir = hubDir();
    fs.writeFileSync(path.join(dir, LOCK_FILE), "");
    takeOver(dir);
  });

  it("leaves a lock file that names another process on release", () => {
    const dir = hubDir();
    const lock = HubLock.acquire(dir);
    fs.writeFileSync(path.join(dir, LOCK_FILE), "1");
    lock.release();
    expect(lockText(dir)).toBe("1");
  });

  describe.skipIf(!hasProc)("with /proc (Linux; skipped elsewhere, where only kill(pid, 0) can tell)", () => {
    it("takes over from an owner that was killed and is a zombie, its parent not having reaped it", async () => {
      const dir = hubDir();
      const owner = await spawnUnreaped(process.execPath, ["-e", "setInterval(() => {}, 60_000)"]);
      try {
        fs.writeFileSync(path.join(dir, LOCK_FILE), String(owner.pid));
        expect(() => HubLock.acquire(dir)).toThrow(`in use by process ${owner.pid}`);
        process.kill(owner.pid, "SIGKILL");
        expect(await waitForProcessState(owner.pid, "Z")).toBe("Z");
        takeOver(dir);
      } finally {
        await owner.release();
      }
    });

    it("takes over from a lock whose pid now belongs to a process that started later (a reused pid)", () => {
      const dir = hubDir();
      const { pid } = startIdleProcess();
      // This process started before the idle one: its identity under the idle one's pid is a lock taken by
      // an earlier process that had that pid.
      fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ ...currentProcessIdentity(), pid }));
      takeOver(dir);
    });
  });
});
