/**
 * The app on the devhost in a child process, as `npm start` runs it: `node <devhost cli> --app <entry> --settings
 * <file> --data-dir <dir> --port 0 --no-emulators`, pointed at services that live elsewhere (the caller's local
 * stack). It can be SIGKILLed at any moment and started again on the same data directory, where the durable task
 * hub survives. Its output goes to a log file, not through this process, which has better things to do; `echo`
 * also copies it here (for debugging a test). The demo, the soak, the benchmarks and the app's tests all launch
 * the app with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export interface AppProcessOptions {
  /** The devhost CLI script: the compiled package's (compiledDevhostCli()), or a transpiled copy of it. */
  cli: string;
  /** The compiled app entry (dist/src/index.js). */
  appEntry: string;
  /** Durable task hub and timer status; kept across restarts. */
  dataDir: string;
  /** App settings (`Values`), written to <dataDir>/settings.json and passed with --settings. */
  settings: Record<string, string>;
  /** Every run's stdout and stderr are appended here; default <dataDir>/app.log. */
  logFile?: string;
  /** How long a start may take before it counts as failed; default 60 s. */
  startTimeoutMs?: number;
  /** Also writes each chunk of the app's output here as it arrives. */
  echo?: (chunk: string) => void;
  /** Options for the app's node process itself (the benchmark's --profile passes --cpu-prof here). */
  nodeArgs?: string[];
}

const HOST_STARTED = /Host started: (http:\/\/127\.0\.0\.1:\d+)/;
/** The start-up line that names the durable HTTP API with its system key (`code`). */
const DURABLE_API_KEY = /Durable HTTP API \(system key durabletask_extension\): \S+\?code=([\w%-]+)/;

/** The devhost CLI of the installed (compiled) devhost package, for tools that run from dist/. */
export function compiledDevhostCli(): string {
  return require.resolve("devhost/cli");
}

export class AppProcess {
  private child: ChildProcess | undefined;
  private childExit: Promise<number | null> = Promise.resolve(null);
  private currentUrl: string | undefined;
  private currentDurableKey: string | undefined;
  private lastPid: number | undefined;
  private readonly settingsFile: string;
  readonly logFile: string;
  /** How many times the app was started. */
  starts = 0;

  constructor(private readonly options: AppProcessOptions) {
    fs.mkdirSync(options.dataDir, { recursive: true });
    this.settingsFile = path.join(options.dataDir, "settings.json");
    this.logFile = options.logFile ?? path.join(options.dataDir, "app.log");
    fs.writeFileSync(
      this.settingsFile,
      `${JSON.stringify({ IsEncrypted: false, Values: options.settings }, null, 2)}\n`,
    );
  }

  /** http://127.0.0.1:<port> of the running app; throws while it is down. */
  get url(): string {
    if (!this.currentUrl) throw new Error("the app is not running");
    return this.currentUrl;
  }

  /**
   * The durable HTTP API's system key, which /runtime/webhooks/durabletask/ requires (as `code` or
   * `x-functions-key`); the devhost keeps it in the data directory, so it stays the same across restarts.
   */
  get durableKey(): string {
    if (!this.currentDurableKey) throw new Error("the app has not started");
    return this.currentDurableKey;
  }

  get running(): boolean {
    return this.currentUrl !== undefined;
  }

  /** The process id of the current run, or of the last one once it has ended. */
  get pid(): number | undefined {
    return this.child?.pid ?? this.lastPid;
  }

  get dataDir(): string {
    return this.options.dataDir;
  }

  /** Resolves with the exit code of the current (or last) run. */
  get exited(): Promise<number | null> {
    return this.childExit;
  }

  /** Everything the app printed, over all its runs. */
  output(): string {
    return fs.existsSync(this.logFile) ? this.readLog(0) : "";
  }

  /** Starts the app and resolves with its URL once the devhost reports "Host started". */
  async start(): Promise<string> {
    if (this.child) throw new Error("the app is already running");
    const logOffset = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
    const child = this.spawnDevhost();
    this.child = child;
    this.lastPid = child.pid;
    this.starts++;
    this.childExit = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    void this.childExit.then(() => {
      if (this.child === child) {
        this.child = undefined;
        this.currentUrl = undefined;
      }
    });
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 60_000);
    for (;;) {
      const output = this.readLog(logOffset);
      const found = HOST_STARTED.exec(output);
      if (found?.[1]) {
        const key = DURABLE_API_KEY.exec(output)?.[1];
        if (key) this.currentDurableKey = decodeURIComponent(key);
        this.currentUrl = found[1];
        return found[1];
      }
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        const output = this.readLog(logOffset).split("\n").slice(-30).join("\n");
        child.kill("SIGKILL");
        throw new Error(`the app did not start (see ${this.logFile}):\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** SIGKILL: no shutdown hook runs, in-flight invocations and locks are simply lost. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.currentUrl = undefined;
    child.kill("SIGKILL");
    await this.childExit;
  }

  /** SIGTERM (the devhost stops cleanly), then SIGKILL after `graceMs`; resolves with the exit code. */
  async stop(graceMs = 15_000): Promise<number | null> {
    const child = this.child;
    if (!child) return this.childExit;
    this.currentUrl = undefined;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    const code = await this.childExit;
    clearTimeout(timer);
    return code;
  }

  private spawnDevhost(): ChildProcess {
    const { cli, appEntry, dataDir, echo } = this.options;
    // Settings from the file only: a variable already set in this process must not win over it.
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
    for (const name of Object.keys(this.options.settings)) delete env[name];
    const args = [...(this.options.nodeArgs ?? []), cli, "--app", appEntry, "--settings", this.settingsFile];
    args.push("--data-dir", dataDir, "--port", "0", "--no-emulators");
    const cwd = path.dirname(this.settingsFile);
    if (!echo) {
      const log = fs.openSync(this.logFile, "a");
      try {
        return spawn(process.execPath, args, { cwd, env, stdio: ["ignore", log, log] });
      } finally {
        fs.closeSync(log);
      }
    }
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const copy = (chunk: Buffer): void => {
      fs.appendFileSync(this.logFile, chunk);
      echo(chunk.toString());
    };
    child.stdout?.on("data", copy);
    child.stderr?.on("data", copy);
    return child;
  }

  private readLog(offset: number): string {
    if (!fs.existsSync(this.logFile)) return "";
    const fd = fs.openSync(this.logFile, "r");
    try {
      const size = fs.fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.max(0, size - offset));
      fs.readSync(fd, buffer, 0, buffer.length, offset);
      return buffer.toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  }
}
