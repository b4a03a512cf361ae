/**
 * The app as `npm start` runs it, in a child process: `node <devhost cli> --app <entry> --settings <file>
 * --data-dir <dir> --port 0 --no-emulators`, pointed at emulators that live elsewhere (the caller's process).
 * It can be SIGKILLed at any moment and started again on the same data directory, where the durable task hub
 * survives. Its output goes to a log file, not through this process, which has better things to do.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export interface AppProcessOptions {
  /** The devhost CLI script: dist/devhost/main.js, or a transpiled copy of it. */
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
}

const HOST_STARTED = /Host started: (http:\/\/127\.0\.0\.1:\d+)/;

export class AppProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;
  private currentUrl: string | undefined;
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

  get running(): boolean {
    return this.currentUrl !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the app and resolves with its URL once the devhost reports "Host started". */
  async start(): Promise<string> {
    if (this.child) throw new Error("the app is already running");
    const logOffset = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
    const log = fs.openSync(this.logFile, "a");
    const { cli, appEntry, dataDir } = this.options;
    // Settings from the file only: a variable already set in this process must not win over it.
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
    for (const name of Object.keys(this.options.settings)) delete env[name];
    const child = spawn(
      process.execPath,
      [
        cli,
        "--app",
        appEntry,
        "--settings",
        this.settingsFile,
        "--data-dir",
        dataDir,
        "--port",
        "0",
        "--no-emulators",
      ],
      { cwd: path.dirname(this.settingsFile), env, stdio: ["ignore", log, log] },
    );
    fs.closeSync(log);
    this.child = child;
    this.starts++;
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    void this.exited.then(() => {
      if (this.child === child) {
        this.child = undefined;
        this.currentUrl = undefined;
      }
    });
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 60_000);
    for (;;) {
      const found = HOST_STARTED.exec(this.readLog(logOffset));
      if (found?.[1]) {
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
    await this.exited;
  }

  /** SIGTERM (the devhost stops cleanly), then SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.currentUrl = undefined;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private readLog(offset: number): string {
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
