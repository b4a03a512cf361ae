/**
 * Runs a child process asynchronously and collects what it prints: the conformance suites' one way of
 * starting another language's test runner. Asynchronous on purpose: the emulator under test runs on
 * this process's event loop and must keep answering while the child talks to it.
 */
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** The full path of `command` on PATH, or undefined when no executable of that name is there. */
export function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export interface CommandResult {
  exitCode: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

export async function runCommand(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs: number },
): Promise<CommandResult> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => {
    output += `\n[killed after ${options.timeoutMs} ms]\n`;
    child.kill("SIGKILL");
  }, options.timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once("error", (error) => {
      output += `\n${String(error)}\n`;
      resolve(null);
    });
    child.once("close", resolve);
  });
  clearTimeout(timer);
  return { exitCode, output };
}

/** What a short probe prints, or undefined when the program is missing or fails (for skip decisions). */
export function probe(command: string, args: string[], env: Record<string, string> = {}): string | undefined {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}
