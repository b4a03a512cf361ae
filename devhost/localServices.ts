// Which embedded emulators the devhost should start, read from the app settings themselves: a Service Bus
// connection string with UseDevelopmentEmulator=true on a loopback endpoint, a Cosmos DB connection string
// whose AccountEndpoint is on loopback, and service URLs on the simulator's loopback port. An emulator is
// started only where nothing listens yet (the user may run `npm run emulators`, or the official emulators);
// settings that point anywhere else are left alone. Works by value, so other apps' setting names work too.
import net from "node:net";
import { parseConnectionString } from "./settings";

export const DEFAULT_SERVICE_BUS_PORT = 5672;
export const DEFAULT_COSMOS_PORT = 8081;
export const DEFAULT_SIMULATOR_PORT = 7081;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** What `startEmulators` (devhost/emulators/main.ts) takes. */
export interface StartEmulatorsRequest {
  serviceBus?: boolean;
  cosmos?: boolean;
  simulator?: boolean;
  ports?: { serviceBus?: number; cosmos?: number; simulator?: number };
  /** One line per notable emulator event. */
  log?: (line: string) => void;
}

/** Addresses of running emulators; any may be absent. */
export interface EmulatorHandles {
  serviceBusConnectionString?: string;
  cosmosConnectionString?: string;
  simulatorUrl?: string;
  stop?(): Promise<void>;
}

export type StartEmulators = (request: StartEmulatorsRequest) => Promise<EmulatorHandles>;

function loopbackServiceBusPort(value: string): number | undefined {
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

function loopbackCosmosPort(value: string): number | undefined {
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

function simulatorUrl(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return LOOPBACK.has(url.hostname) && Number(url.port) === DEFAULT_SIMULATOR_PORT ? url : undefined;
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

/** Decides which emulators to start for the settings in `env`. */
export async function planEmulators(env: NodeJS.ProcessEnv = process.env): Promise<EmulatorPlan> {
  const found: { serviceBus?: number; cosmos?: number; simulator?: number } = {};
  for (const value of Object.values(env)) {
    if (!value) continue;
    found.serviceBus ??= loopbackServiceBusPort(value);
    found.cosmos ??= loopbackCosmosPort(value);
    const url = simulatorUrl(value);
    if (url) found.simulator ??= Number(url.port);
  }
  // startEmulators starts everything it is not told otherwise about, so every kind gets an explicit answer.
  const request: StartEmulatorsRequest = { serviceBus: false, cosmos: false, simulator: false, ports: {} };
  const notes: string[] = [];
  const labels = {
    serviceBus: "Service Bus",
    cosmos: "Cosmos DB",
    simulator: "remote services simulator",
  } as const;
  for (const kind of ["serviceBus", "cosmos", "simulator"] as const) {
    const port = found[kind];
    if (port === undefined) continue;
    if (await isListening(port)) {
      notes.push(`${labels[kind]}: something already listens on 127.0.0.1:${port}; using it.`);
      continue;
    }
    request[kind] = true;
    (request.ports ??= {})[kind] = port;
    notes.push(`${labels[kind]}: starting the embedded emulator on 127.0.0.1:${port}.`);
  }
  return { request, notes };
}

/**
 * Settings to override so that the app talks to the given emulators: loopback Service Bus emulator and
 * Cosmos DB connection strings are replaced, simulator URLs get the simulator's origin (path kept).
 */
export function settingsForEmulators(
  handles: EmulatorHandles,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const overrides: Record<string, string> = {};
  const simulatorOrigin = handles.simulatorUrl ? new URL(handles.simulatorUrl).origin : undefined;
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (handles.serviceBusConnectionString && loopbackServiceBusPort(value) !== undefined) {
      if (value !== handles.serviceBusConnectionString) overrides[name] = handles.serviceBusConnectionString;
    } else if (handles.cosmosConnectionString && loopbackCosmosPort(value) !== undefined) {
      if (value !== handles.cosmosConnectionString) overrides[name] = handles.cosmosConnectionString;
    } else if (simulatorOrigin) {
      const url = simulatorUrl(value);
      if (url && url.origin !== simulatorOrigin)
        overrides[name] = simulatorOrigin + value.slice(url.origin.length);
    }
  }
  return overrides;
}
