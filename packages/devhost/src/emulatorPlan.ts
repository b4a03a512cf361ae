// Which embedded emulators the devhost should start, read from the app settings themselves: a Service Bus
// connection string with UseDevelopmentEmulator=true on a loopback endpoint, and a Cosmos DB connection string
// whose AccountEndpoint is on loopback. An emulator is started only where nothing listens yet (the user may run
// the emulators in another process, or the official ones); settings that point anywhere else are left alone.
// Works by value, so any app's setting names work. What the emulators serve (queues; databases and containers)
// comes from config files the app names in two settings, so the runtime holds nothing of any one app.
import net from "node:net";
import type { IncomingMessage } from "node:http";
import fs from "node:fs";
import path from "node:path";
import type { CosmosEmulatorConfig } from "./emulators/cosmos/config";
import type { ServedResponse } from "./emulators/cosmos/gateway";
import type { EmulatorConfigFile } from "./emulators/servicebus/config";
import type { EmulatorClock } from "./emulators/servicebus/wallClockTimer";
import { DEFAULT_SERVICE_BUS_PORT } from "./emulators/ports";
import { parseConnectionString } from "./settings";

/** The app setting naming the Service Bus emulator's queue config (official Config.json format). */
export const SERVICE_BUS_CONFIG_SETTING = "DEVHOST_SERVICEBUS_CONFIG";
/** The app setting naming the Cosmos DB emulator's config (databases, containers, indexing policies). */
export const COSMOS_CONFIG_SETTING = "DEVHOST_COSMOS_CONFIG";
/** The config files the emulators read from the app root (the folder of host.json) when no setting names one. */
export const SERVICE_BUS_CONFIG_FILE = "servicebus-emulator.config.json";
export const COSMOS_CONFIG_FILE = "cosmos-emulator.config.json";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** What `startEmulators` (emulators/index.ts) takes. */
export interface StartEmulatorsRequest {
  /** Default true. */
  serviceBus?: boolean;
  /** Default true. */
  cosmos?: boolean;
  /** Default 5672 and 8081; 0 picks an ephemeral port (tests). */
  ports?: { serviceBus?: number; cosmos?: number };
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** The queues: a Config.json path or parsed file; default none. */
  serviceBusConfig?: string | EmulatorConfigFile;
  /** The databases and containers: a config path or parsed config; default none. */
  cosmosConfig?: string | CosmosEmulatorConfig;
  /** Sees every request to the Cosmos DB stand-in (benchmarks count them). */
  onCosmosRequest?: (request: IncomingMessage) => void;
  /** Sees each of those requests again once answered, with the response's status and size. */
  onCosmosResponse?: (request: IncomingMessage, response: ServedResponse) => void;
  /** One line per notable emulator event. */
  log?: (line: string) => void;
  /** Time for the Service Bus emulator's schedules, locks and TTL (a time-skipping host's clock); default real. */
  clock?: EmulatorClock;
}

/** Where running emulators can be reached; any may be absent. */
export interface EmulatorAddresses {
  serviceBusConnectionString?: string;
  cosmosConnectionString?: string;
  /** http://<host>:<port> of the Cosmos DB stand-in. */
  cosmosEndpoint?: string;
}

/** Emulators that were started, and how to stop them again. */
export interface EmulatorHandles extends EmulatorAddresses {
  stop(): Promise<void>;
}

export type StartEmulators = (request: StartEmulatorsRequest) => Promise<EmulatorHandles>;

/** The port of a Service Bus emulator connection string on loopback; undefined for anything else. */
export function loopbackServiceBusPort(value: string): number | undefined {
  if (!/usedevelopmentemulator\s*=\s*true/i.test(value)) return undefined;
  const endpoint = parseConnectionString(value).get("endpoint");
  if (!endpoint) return undefined;
  try {
    const url = new URL(endpoint);
    return LOOPBACK.has(url.hostname) ? Number(url.port || DEFAULT_SERVICE_BUS_PORT) : undefined;
  } catch {
    return undefined;
  }
}

/** The port of a Cosmos DB connection string whose AccountEndpoint is on loopback; undefined otherwise. */
export function loopbackCosmosPort(value: string): number | undefined {
  const endpoint = parseConnectionString(value).get("accountendpoint");
  if (!endpoint) return undefined;
  try {
    const url = new URL(endpoint);
    if (!LOOPBACK.has(url.hostname)) return undefined;
    return Number(url.port || (url.protocol === "https:" ? 443 : 80));
  } catch {
    return undefined;
  }
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number, host = "127.0.0.1", timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (listening: boolean): void => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export interface EmulatorPlan {
  request: StartEmulatorsRequest;
  /** One line per decision, for the start-up log. */
  notes: string[];
}

const KINDS = {
  serviceBus: {
    label: "Service Bus",
    port: loopbackServiceBusPort,
    setting: SERVICE_BUS_CONFIG_SETTING,
    file: SERVICE_BUS_CONFIG_FILE,
    without: "the emulator serves no queues or topics",
  },
  cosmos: {
    label: "Cosmos DB",
    port: loopbackCosmosPort,
    setting: COSMOS_CONFIG_SETTING,
    file: COSMOS_CONFIG_FILE,
    without: "the emulator creates no database",
  },
} as const;

/**
 * Decides which emulators to start for the settings in `env`, and with which config: the file a config
 * setting names, resolved against the app root (the folder of host.json).
 */
export async function planEmulators(env: NodeJS.ProcessEnv, appRoot: string): Promise<EmulatorPlan> {
  // startEmulators starts everything it is not told otherwise about, so every kind gets an explicit answer.
  const request: StartEmulatorsRequest = { serviceBus: false, cosmos: false, ports: {} };
  const notes: string[] = [];
  for (const kind of ["serviceBus", "cosmos"] as const) {
    const { label, port: portOf, setting, without } = KINDS[kind];
    let port: number | undefined;
    for (const value of Object.values(env)) port ??= value ? portOf(value) : undefined;
    if (port === undefined) continue;
    if (await isListening(port)) {
      notes.push(`${label}: something already listens on 127.0.0.1:${port}; using it.`);
      continue;
    }
    request[kind] = true;
    (request.ports ??= {})[kind] = port;
    notes.push(`${label}: starting the embedded emulator on 127.0.0.1:${port}.`);
    const configFile = env[setting]
      ? path.resolve(appRoot, env[setting])
      : [path.join(appRoot, KINDS[kind].file)].find((file) => fs.existsSync(file));
    if (kind === "serviceBus") request.serviceBusConfig = configFile;
    else request.cosmosConfig = configFile;
    notes.push(
      configFile
        ? `${label}: config ${configFile}${env[setting] ? ` (${setting})` : ""}.`
        : `${label}: no ${setting} setting and no ${KINDS[kind].file} next to host.json, so ${without}.`,
    );
  }
  return { request, notes };
}

/**
 * Settings to override so that the app talks to the given emulators: loopback Service Bus emulator and Cosmos
 * DB connection strings are replaced by theirs.
 */
export function settingsForEmulators(
  emulators: EmulatorAddresses,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (emulators.serviceBusConnectionString && loopbackServiceBusPort(value) !== undefined) {
      if (value !== emulators.serviceBusConnectionString)
        overrides[name] = emulators.serviceBusConnectionString;
    } else if (emulators.cosmosConnectionString && loopbackCosmosPort(value) !== undefined) {
      if (value !== emulators.cosmosConnectionString) overrides[name] = emulators.cosmosConnectionString;
    }
  }
  return overrides;
}
