// A child process whose parent does not reap it: once killed, it stays a zombie (state Z in /proc/<pid>/stat)
// until released, as a process does under a PID 1 that reaps late or never. Node cannot be that parent,
// because libuv reaps its children as soon as they exit. So the parent is a POSIX sh that starts the command
// in the background and waits for it, and is stopped (SIGSTOP) at once. A stopped sh does not reap its child
// until release() lets it go on (SIGCONT). Needs /bin/sh and /proc, so Linux only.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";

export interface UnreapedProcess {
  /** The command's pid. */
  pid: number;
  /** The stopped sh that holds it: its exitCode stays null until release(). */
  parent: ChildProcess;
  /** What the command has written to stdout and stderr so far. */
  output: () => string;
  /** Kills the command if it still runs, lets the parent reap it, and waits until the parent has exited. */
  release: () => Promise<void>;
}

export async function spawnUnreaped(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<UnreapedProcess> {
  // fd 3 carries the pid alone: the command does not inherit it, so it ends once sh has written the pid.
  const script = '"$@" 3>&- & echo "$!" >&3; exec 3>&-; wait';
  const parent = spawn("/bin/sh", ["-c", script, "sh", command, ...args], {
    ...options,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  const [, stdout, stderr, pidPipe] = parent.stdio;
  if (!stdout || !stderr || !pidPipe) throw new Error("spawn gave sh no pipes");
  let output = "";
  stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const pidText = await new Promise<string>((resolve, reject) => {
    let text = "";
    pidPipe.on("data", (chunk: Buffer) => (text += chunk.toString()));
    pidPipe.once("end", () => resolve(text));
    parent.once("error", reject);
  });
  const pid = Number(pidText.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    parent.kill("SIGKILL");
    throw new Error(`sh did not say the pid of ${command}: ${JSON.stringify(pidText)}`);
  }
  parent.kill("SIGSTOP");

  const exited = new Promise<void>((resolve) => parent.once("exit", () => resolve()));
  const release = async (): Promise<void> => {
    if (parent.exitCode !== null || parent.signalCode !== null) return;
    // Still stopped, the parent has not reaped the pid, so it cannot belong to anyone else yet.
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // ESRCH: it exited before the sh was stopped, and the sh reaped it
    }
    parent.kill("SIGCONT");
    const stuck = setTimeout(() => parent.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(stuck);
  };
  return { pid, parent, output: () => output, release };
}

/** Field 3 of /proc/<pid>/stat (R, S, Z, ...), or undefined when there is no such process. */
export function processState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

/** Waits until the process is in `state` (a kill takes effect asynchronously); returns the last state seen. */
export async function waitForProcessState(
  pid: number,
  state: string,
  timeoutMs = 5_000,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = processState(pid);
    if (seen === state || Date.now() > deadline) return seen;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
