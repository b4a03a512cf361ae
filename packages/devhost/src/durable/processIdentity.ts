// Which process this is, and whether the process a lock file names still runs.
//
// kill(pid, 0) cannot answer the second question alone. It succeeds for a zombie: a process that was killed
// but that its parent has not reaped yet, which under a PID 1 that reaps late or never (most containers)
// stays a zombie for seconds or for good. It also succeeds for an unrelated process that got the pid later.
// On Linux /proc answers both. The state field says zombie or dead. The start time says whether the process
// under that pid is the one that took the lock, and the boot id says whether it started in the same boot.
import fs from "node:fs";

export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot (Linux only). */
  startTime?: number;
  /** /proc/sys/kernel/random/boot_id: the boot that startTime counts from (Linux only). */
  bootId?: string;
}

export interface ProcStat {
  /** Field 3: R running, S sleeping, D disk wait, T stopped, Z zombie, X dead, ... (proc_pid_stat(5)). */
  state: string;
  startTime: number;
}

/** Parses the text of /proc/<pid>/stat. */
export function parseProcStat(text: string): ProcStat {
  // Field 2, the command name, is in parentheses and may hold spaces and ")" itself: the fields after it
  // start after the last ")".
  const close = text.lastIndexOf(")");
  const fields =
    close < 0
      ? []
      : text
          .slice(close + 1)
          .trim()
          .split(/\s+/);
  // fields[0] is field 3 of proc_pid_stat(5), so field n is fields[n - 3].
  const state = fields[0] ?? "";
  const startTime = Number(fields[22 - 3]);
  if (!/^[A-Za-z]$/.test(state) || !Number.isSafeInteger(startTime)) {
    throw new Error(`Not the text of /proc/<pid>/stat: ${JSON.stringify(text.slice(0, 200))}`);
  }
  return { state, startTime };
}

/** A zombie (exited, not reaped) or a process being torn down: its pid is taken, but it runs no more code. */
const EXITED_STATES = new Set(["Z", "X", "x"]);

let procAvailable: boolean | undefined;
/** Whether this system has a Linux-style /proc (not macOS, not Windows). */
export function hasProcFs(): boolean {
  procAvailable ??= fs.existsSync("/proc/self/stat");
  return procAvailable;
}

/** This process, with what tells it from a later process under the same pid where the system says it. */
export function currentProcessIdentity(): ProcessIdentity {
  if (!hasProcFs()) return { pid: process.pid };
  const stat = readProcStat(process.pid);
  const bootId = readBootId();
  return {
    pid: process.pid,
    ...(stat && { startTime: stat.startTime }),
    ...(bootId !== undefined && { bootId }),
  };
}

/**
 * Whether the process `owner` names still runs: not exited (zombies included), and, when `owner` records its
 * start time and boot, not a later process that got the same pid.
 */
export function isRunning(owner: ProcessIdentity): boolean {
  // Without /proc (macOS, Windows) only the signal can tell, and it takes a zombie for a running process.
  // On macOS a zombie lasts until its parent reaps it, and orphans go to launchd, which reaps them at once.
  // On Windows libuv answers from the process's exit code, so a killed process counts as gone.
  if (!hasProcFs()) return signalReaches(owner.pid);
  if (owner.bootId !== undefined) {
    const bootId = readBootId();
    if (bootId !== undefined && bootId !== owner.bootId) return false; // the machine restarted since
  }
  const stat = readProcStat(owner.pid);
  // No entry: the process is gone and reaped, or /proc hides it (hidepid hides other users' processes),
  // which the signal tells apart (EPERM: it exists).
  if (!stat) return signalReaches(owner.pid);
  if (EXITED_STATES.has(stat.state)) return false;
  if (owner.startTime !== undefined && stat.startTime !== owner.startTime) return false; // pid reused
  return true;
}

function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  return parseProcStat(text);
}

function readBootId(): string | undefined {
  try {
    return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    return undefined; // some sandboxes do not expose it; the start time alone then decides
  }
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
