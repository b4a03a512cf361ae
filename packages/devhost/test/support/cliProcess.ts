// The devhost CLI in a child process, as a user runs it: its output collected, its exit awaited, and what it
// costs in memory read from /proc (Linux).
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";

export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}

export function runCliProcess(
  bin: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): RunningCli {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { ...process.env, NODE_OPTIONS: "", ...env },
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Waits for `pattern` in the output; gives up at the timeout, or at once when `child` has exited. */
export async function waitForOutput(
  running: Pick<RunningCli, "output"> & { child: { readonly exitCode: number | null } },
  pattern: RegExp,
  timeoutMs = 15_000,
): Promise<RegExpMatchArray> {
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

/** A field of /proc/<pid>/status in bytes (VmRSS: resident now; VmHWM: the peak since start or the last reset). */
export function processMemory(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Starts a new peak: VmHWM drops to the current VmRSS (proc(5), /proc/<pid>/clear_refs, value 5). */
export function resetPeakMemory(pid: number): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
}
