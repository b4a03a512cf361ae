/**
 * The order app on the devhost in child processes, against the local stack in the test process: for the
 * failure-catalogue entries that kill the app, run two instances at once, or restart it with another build. Each
 * child is the devhost CLI the global setup transpiled, launched by the tools' AppProcess exactly as the demo and
 * the soak launch it (`devhost --app <entry> --settings <file> --no-emulators --port 0 --data-dir <dir>`),
 * configured the way `npm start` is (local.settings.sample.json pointed at the stack) plus the short e2e timings.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CosmosClient, type Container } from "@azure/cosmos";
import { ServiceBusClient } from "@azure/service-bus";
import { EMULATOR_KEY } from "devhost/emulators";
import { inject } from "vitest";
import type { StateRecord } from "../../src/domain";
import { AppProcess } from "../../tools/appProcess";
import { startLocalStack, type LocalStackAddresses } from "../../tools/localStack";
import {
  APP_ENTRY,
  E2E_SETTINGS,
  recordWaits,
  simulatorAndQueues,
  type LedgerEntry,
  type RecordWaits,
  type SimulatorFaults,
} from "./e2e";
import { startFaultProxies, type FaultProxies } from "./faultProxy";
import { devhostCliIn } from "./globalSetup";

export type { AppProcess } from "../../tools/appProcess";

/** The app's host.json, at the repository's root. */
const APP_HOST_JSON = path.join(__dirname, "..", "..", "host.json");

/** Wrapper entries under test/support/apps find the transpiled app through this variable. */
export const ORDER_APP_ENTRY_SETTING = "ORDER_APP_ENTRY";

/** A test app entry (test/support/apps/<name>/index.js) that wraps the order app. */
export function orderAppVariant(name: string): string {
  return path.join(__dirname, "apps", name, "index.js");
}

export interface StartAppOptions {
  /** Task hub and timer status; reuse one to restart "the same" app. Default: a new temp directory. */
  dataDir?: string;
  /** Default: the transpiled order app (APP_ENTRY). */
  appEntry?: string;
  /**
   * Run only these of the entry's functions (host.json "functions"). The devhost reads host.json in the entry's
   * app root, so the entry is loaded through a wrapper in a temporary app root whose host.json is the app's own
   * with this list added. Default: every function the entry registers.
   */
  functions?: readonly string[];
  /** App settings on top of the sample settings and E2E_SETTINGS. */
  settings?: Record<string, string>;
}

export interface ChildStack extends RecordWaits {
  /** The emulators themselves: what the stack's own clients use, so they see the truth during faults. */
  emulators: LocalStackAddresses;
  /** With `faultProxies`: the proxies between the apps and their store and bus (faultProxy.ts). */
  proxies?: FaultProxies;
  bus: ServiceBusClient;
  containers: { state: Container; leases: Container };
  /** Starts an app and resolves once it serves HTTP (its url is then set). */
  startApp(options?: StartAppOptions): Promise<AppProcess>;
  /** The state record, read from the store (works while no app runs). */
  state(orderId: string): Promise<StateRecord | null>;
  ledger(orderId?: string): Promise<LedgerEntry[]>;
  faults: SimulatorFaults;
  /** Messages on a queue right now (receive-and-delete). */
  drain(queue: string): Promise<unknown[]>;
  /** Kills the apps still running, stops the stack, removes the temp directories. */
  stop(): Promise<void>;
}

export interface ChildStackOptions {
  /** Start the apps behind fault proxies (faultProxy.ts): `proxies` breaks their connections, not the stack's. */
  faultProxies?: boolean;
}

export async function startChildStack(options: ChildStackOptions = {}): Promise<ChildStack> {
  const stack = await startLocalStack();
  const { emulators } = stack;
  const faulty = options.faultProxies ? await startFaultProxies(emulators) : undefined;
  // The apps' settings: the shipped ones pointed at the stack, or at the proxies in front of it.
  const appSettings = faulty?.appSettings ?? stack.appSettings;
  const cli = devhostCliIn(inject("appBuildDir"));
  const temps: string[] = [];
  const started = new Set<AppProcess>();
  const bus = new ServiceBusClient(emulators.serviceBusConnectionString);
  const cosmos = new CosmosClient({
    endpoint: emulators.cosmosEndpoint,
    key: EMULATOR_KEY,
    connectionPolicy: { enableEndpointDiscovery: false },
  });
  const database = cosmos.database(stack.cosmos.database);
  const containers = { state: database.container("state"), leases: database.container("leases") };

  /** A wrapper of `entry` in a temporary app root whose host.json (the app's own) lists only `functions`. */
  function appRootWith(entry: string, functions: readonly string[]): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-app-root-"));
    temps.push(root);
    const hostJson = JSON.parse(fs.readFileSync(APP_HOST_JSON, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(path.join(root, "host.json"), JSON.stringify({ ...hostJson, functions }, null, 2));
    const wrapper = path.join(root, "index.js");
    fs.writeFileSync(wrapper, `"use strict";\nrequire(${JSON.stringify(entry)});\n`);
    return wrapper;
  }

  async function startApp(options: StartAppOptions = {}): Promise<AppProcess> {
    const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "e2e-child-"));
    if (!temps.includes(dataDir)) temps.push(dataDir);
    const entry = options.appEntry ?? APP_ENTRY;
    const app = new AppProcess({
      cli,
      appEntry: options.functions ? appRootWith(entry, options.functions) : entry,
      dataDir,
      // Each start gets its own log, so output() is this run's alone even when a data directory is reused.
      logFile: path.join(dataDir, `app-${Date.now()}-${started.size}.log`),
      settings: appSettings({
        ...E2E_SETTINGS,
        [ORDER_APP_ENTRY_SETTING]: APP_ENTRY,
        ...options.settings,
      }),
      startTimeoutMs: 30_000,
      ...(process.env.E2E_LOGS ? { echo: (chunk: string) => process.stdout.write(chunk) } : {}),
    });
    await app.start();
    // Kept until the stack stops, not until this run exits: a test may kill the app and start it again, and the
    // restarted process must be stopped with the stack too (kill() does nothing to one that is not running).
    started.add(app);
    return app;
  }

  const state = async (orderId: string): Promise<StateRecord | null> => {
    const { resource } = await containers.state.item(orderId, orderId).read<StateRecord>();
    return resource ?? null;
  };

  return {
    emulators,
    ...(faulty ? { proxies: faulty.proxies } : {}),
    bus,
    containers,
    startApp,
    state,
    ...recordWaits(state),
    ...simulatorAndQueues(emulators.simulatorUrl, bus),
    async stop() {
      await Promise.all([...started].map((app) => app.kill()));
      await bus.close();
      cosmos.dispose();
      await faulty?.close();
      await stack.stop();
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
