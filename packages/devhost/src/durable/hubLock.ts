// The task hub's single-writer lock: a LOCK file in the hub's directory naming the process that has the hub
// open. Two processes on one hub would interleave journal lines and corrupt it. A killed owner leaves its
// file behind, so a process that finds one takes the hub over once that owner no longer runs.
//
// Why a file and not a kernel lock that dies with its process: Node has no flock or fcntl lock in core, and
// a native addon is more than a development host should ask its users to build.
import fs from "node:fs";
import path from "node:path";
import { currentProcessIdentity, isRunning, type ProcessIdentity } from "./processIdentity";

export const LOCK_FILE = "LOCK";

/**
 * The owner a lock file names: JSON of a ProcessIdentity, or a bare pid (as older devhosts write it, with
 * no start time to check). Undefined for anything else, such as a file cut short by a kill while it was being written.
 */
export function parseLockFile(text: string): ProcessIdentity | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return validPid(Number(trimmed)) ? { pid: Number(trimmed) } : undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, startTime, bootId } = value as Record<string, unknown>;
  if (typeof pid !== "number" || !validPid(pid)) return undefined;
  return {
    pid,
    ...(typeof startTime === "number" && Number.isSafeInteger(startTime) && { startTime }),
    ...(typeof bootId === "string" && bootId !== "" && { bootId }),
  };
}

const validPid = (pid: number): boolean => Number.isSafeInteger(pid) && pid > 0;

export class HubLock {
  private constructor(readonly lockPath: string) {}

  /** Takes the lock of the hub in `dir`, taking it over from an owner that no longer runs. */
  static acquire(dir: string): HubLock {
    const lockPath = path.join(dir, LOCK_FILE);
    const me = JSON.stringify(currentProcessIdentity());
    // A stale lock is removed and then created exclusively like a fresh one, rather than overwritten, so that
    // of two processes starting at once on a stale lock usually only one wins. Both still win if one removes
    // the lock the other has just created; no file-only protocol closes that window without a kernel lock.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (createExclusive(lockPath, me)) return new HubLock(lockPath);
      const owner = readOwner(lockPath);
      // Our own pid: a process before us had it (a container restarted with the same pid) and is gone; a
      // second open in this process is refused before the lock is asked.
      if (owner && owner.pid !== process.pid && isRunning(owner)) {
        throw new Error(
          `Task hub ${dir} is in use by process ${owner.pid}. Stop that process first, or use another data ` +
            `directory. If process ${owner.pid} is not a devhost, delete ${lockPath}.`,
        );
      }
      fs.rmSync(lockPath, { force: true });
    }
    throw new Error(
      `Task hub ${dir}: could not take ${lockPath}; other processes keep taking it at the same time`,
    );
  }

  /** Removes the lock file if it still names this process. */
  release(): void {
    try {
      if (readOwner(this.lockPath)?.pid === process.pid) fs.rmSync(this.lockPath, { force: true });
    } catch {
      // Unreadable: it is not ours to remove, and closing the hub must not fail over it.
    }
  }
}

function createExclusive(lockPath: string, text: string): boolean {
  try {
    fs.writeFileSync(lockPath, text, { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** The owner the lock file names; undefined when it is gone or names none. */
function readOwner(lockPath: string): ProcessIdentity | undefined {
  try {
    return parseLockFile(fs.readFileSync(lockPath, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
