/**
 * The order app on the devhost in child processes, against emulators that run in the test process: for the
 * failure-catalogue entries that kill the app, run two instances at once, or restart it with another build. Each
 * child is the devhost CLI (`devhost --app <entry> --no-emulators --port 0 --data-dir <dir>`), configured the way
 * `npm start` is (local.settings.sample.json redirected to the emulators) plus the short e2e timings.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CosmosClient, type Container } from "@azure/cosmos";
import { ServiceBusClient } from "@azure/service-bus";
import { startEmulators, type EmulatorHandles } from "../../devhost/emulators/main";
import { settingsForEmulators } from "../../devhost/localServices";
import type { ProcessState, StateRecord } from "../../src/domain";
import ts from "typescript";
import { APPS_DIR } from "./devhost";
import { APP_ENTRY, E2E_SETTINGS, simulatorAndQueues, type FaultSpec, type LedgerEntry } from "./e2e";

/** Wrapper entries under test/support/apps find the transpiled app through this variable. */
export const ORDER_APP_ENTRY_SETTING = "ORDER_APP_ENTRY";

/** A test app entry (test/support/apps/<name>/index.js) that wraps the order app. */
export function orderAppVariant(name: string): string {
  return path.join(APPS_DIR, name, "index.js");
}

export interface AppProcess {
  /** Base URL of the app's HTTP server (`${url}/api/...`, `${url}/durabletask/...`). */
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  /** Everything the devhost printed so far (its log lines, stdout and stderr). */
  output(): string;
  readonly exited: Promise<number | null>;
  /** SIGKILL: no shutdown code runs, as when a host crashes or its VM disappears. */
  kill(): Promise<void>;
  /** SIGTERM: the devhost's clean stop; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface StartAppOptions {
  /** Task hub and timer status; reuse one to restart "the same" app. Default: a new temp directory. */
  dataDir?: string;
  /** Default: the transpiled order app (APP_ENTRY). */
  appEntry?: string;
  /** App settings on top of the sample settings and E2E_SETTINGS. */
  settings?: Record<string, string>;
}

export interface ChildStack {
  emulators: EmulatorHandles;
  bus: ServiceBusClient;
  containers: { state: Container; leases: Container };
  startApp(options?: StartAppOptions): Promise<AppProcess>;
  /** The state record, read from the store (works while no app runs). */
  state(orderId: string): Promise<StateRecord | null>;
  /** Polls the store until the record is in one of `states`; fails with the last state seen. */
  waitForState(orderId: string, states: ProcessState[], timeoutMs?: number): Promise<StateRecord>;
  /** Polls the store until `predicate` holds for the record; fails with the last record seen. */
  waitForRecord(
    orderId: string,
    predicate: (record: StateRecord) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<StateRecord>;
  ledger(orderId?: string): Promise<LedgerEntry[]>;
  injectFault(spec: FaultSpec): Promise<void>;
  clearFaults(): Promise<void>;
  /** Messages on a queue right now (receive-and-delete). */
  drain(queue: string): Promise<unknown[]>;
  /** Kills the apps still running, stops the emulators, removes the temp directories. */
  stop(): Promise<void>;
}

const REPO = path.resolve(__dirname, "..", "..");

const sampleSettings = (): Record<string, string> =>
  (
    JSON.parse(fs.readFileSync(path.join(REPO, "local.settings.sample.json"), "utf8")) as {
      Values: Record<string, string>;
    }
  ).Values;

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(full) : [full];
    })
    .sort();
}

/**
 * The devhost CLI, transpiled (no type check) once per version of its sources into .test-build/, beside the app
 * build of the global setup: packages resolve from the project's node_modules, dist/ is left alone, and files
 * that start apps in child processes do not each pay for the compiler. Returns the path of bin/devhost.js.
 */
export function devhostCli(): string {
  const sources = walk(path.join(REPO, "devhost")).filter(
    (f) => (f.endsWith(".ts") && !f.endsWith(".d.ts")) || f.endsWith(".json"),
  );
  const launcher = path.join(REPO, "bin", "devhost.js");
  const hash = createHash("sha1");
  for (const file of [...sources, launcher])
    hash.update(path.relative(REPO, file)).update(fs.readFileSync(file));
  const dir = path.join(REPO, ".test-build", `devhost-cli-${hash.digest("hex").slice(0, 12)}`);
  const bin = path.join(dir, "bin", "devhost.js");
  if (fs.existsSync(bin)) return bin;
  const staging = `${dir}.${process.pid}.tmp`;
  for (const file of sources) {
    const target = path.join(staging, "dist", path.relative(REPO, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (file.endsWith(".json")) {
      fs.copyFileSync(file, target);
      continue;
    }
    const { outputText } = ts.transpileModule(fs.readFileSync(file, "utf8"), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        resolveJsonModule: true,
      },
    });
    fs.writeFileSync(target.replace(/\.ts$/, ".js"), outputText);
  }
  fs.mkdirSync(path.join(staging, "bin"));
  fs.copyFileSync(launcher, path.join(staging, "bin", "devhost.js"));
  try {
    fs.renameSync(staging, dir);
  } catch {
    // Another test file built the same sources first: its copy is identical.
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return bin;
}

export async function startChildStack(): Promise<ChildStack> {
  const emulators = await startEmulators({ ports: { serviceBus: 0, cosmos: 0, simulator: 0 } });
  const cli = devhostCli();
  const temps: string[] = [];
  const running = new Set<AppProcess>();
  const bus = new ServiceBusClient(emulators.serviceBusConnectionString!);
  const cosmos = new CosmosClient({
    endpoint: emulators.cosmosEndpoint!,
    key: /AccountKey=([^;]+)/.exec(emulators.cosmosConnectionString!)![1]!,
    connectionPolicy: { enableEndpointDiscovery: false },
  });
  const database = cosmos.database(sampleSettings().COSMOS_DATABASE ?? "sas");
  const containers = { state: database.container("state"), leases: database.container("leases") };
  const sim = emulators.simulatorUrl!;

  const baseSettings = (): Record<string, string> => {
    const sample = sampleSettings();
    return {
      ...sample,
      ...settingsForEmulators(emulators, sample),
      ...E2E_SETTINGS,
      [ORDER_APP_ENTRY_SETTING]: APP_ENTRY,
    };
  };

  async function startApp(options: StartAppOptions = {}): Promise<AppProcess> {
    const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "e2e-child-"));
    if (!temps.includes(dataDir)) temps.push(dataDir);
    const child: ChildProcessWithoutNullStreams = spawn(
      process.execPath,
      [cli, "--app", options.appEntry ?? APP_ENTRY, "--no-emulators", "--port", "0", "--data-dir", dataDir],
      {
        cwd: REPO,
        env: { ...process.env, NODE_OPTIONS: "", ...baseSettings(), ...options.settings },
      },
    );
    let output = "";
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      if (process.env.E2E_LOGS) process.stdout.write(`[pid ${child.pid}] ${chunk.toString()}`);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

    const url = await new Promise<string>((resolve, reject) => {
      const deadline = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`the app did not start within 30 s:\n${output}`));
      }, 30_000);
      const poll = setInterval(() => {
        const started = /Host started: (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (started) {
          clearInterval(poll);
          clearTimeout(deadline);
          resolve(started[1]!);
        }
      }, 25);
      void exited.then((code) => {
        clearInterval(poll);
        clearTimeout(deadline);
        reject(new Error(`the app exited with ${code} before it started:\n${output}`));
      });
    });

    const app: AppProcess = {
      url,
      pid: child.pid!,
      dataDir,
      output: () => output,
      exited,
      async kill() {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await exited;
        running.delete(app);
      },
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        const code = await exited;
        running.delete(app);
        return code;
      },
    };
    running.add(app);
    return app;
  }

  const state = async (orderId: string): Promise<StateRecord | null> => {
    const { resource } = await containers.state.item(orderId, orderId).read<StateRecord>();
    return resource ?? null;
  };

  async function waitForRecord(
    orderId: string,
    predicate: (record: StateRecord) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<StateRecord> {
    const deadline = Date.now() + timeoutMs;
    let last: StateRecord | null = null;
    while (Date.now() < deadline) {
      last = await state(orderId);
      if (last && predicate(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `order ${orderId}: ${what} not seen within ${timeoutMs} ms; last state ${last?.processState ?? "none"}, ` +
        `attempt ${last?.attempt}, history ${JSON.stringify(last?.history.slice(-5))}`,
    );
  }

  return {
    emulators,
    bus,
    containers,
    startApp,
    state,
    waitForRecord,
    waitForState: (orderId, states, timeoutMs) =>
      waitForRecord(orderId, (r) => states.includes(r.processState), states.join("/"), timeoutMs),
    ...simulatorAndQueues(sim, bus),
    async stop() {
      await Promise.all([...running].map((app) => app.kill()));
      await bus.close();
      cosmos.dispose();
      await emulators.stop();
      for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** POST /api/orders on a running app. */
export function submitTo(app: AppProcess, order: unknown): Promise<Response> {
  return fetch(`${app.url}/api/orders`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(order),
  });
}
