// Running another language's test suite from a Vitest file: find its tool on PATH, run it to completion
// without blocking this process's event loop (the emulator it talks to lives here), and keep its output for the
// failure message.
import { spawn } from "node:child_process";
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

export interface Finished {
  exitCode: number | null;
  /** stdout and stderr, interleaved as they arrived. */
  output: string;
}

export function runToCompletion(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const append = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", append);
    child.stderr.on("data", append);
    const timer = setTimeout(() => {
      output += `\n[killed after ${options.timeoutMs} ms]\n`;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, output });
    });
  });
}
