/**
 * How this app's settings point at the simulator: the settings that name where the remote services are
 * (REMOTE_SERVICES_URL, and a service's own `<SERVICE>_URL` for each service of src/domain/process.ts) or the
 * dashboard's fault panel (DASHBOARD_SIMULATOR_URL), when their value is an http URL on a loopback host. One
 * simulator serves every service, so they must agree on one port; any port will do (7081 is only the default).
 */
import { isListening } from "devhost";
import { AGENT_NAMES, serviceUrlSetting } from "../../src/domain";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** The settings that address the simulator when they point at loopback. */
export const SIMULATOR_SETTINGS: readonly string[] = [
  "REMOTE_SERVICES_URL",
  ...AGENT_NAMES.map(serviceUrlSetting),
  "DASHBOARD_SIMULATOR_URL",
];

/** The URL when `value` is an http(s) URL on a loopback host, else undefined. */
export function loopbackUrlIn(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return LOOPBACK.has(url.hostname) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The simulator settings that point at loopback, name → URL. */
export function simulatorUrlsIn(env: NodeJS.ProcessEnv): Map<string, URL> {
  const found = new Map<string, URL>();
  for (const name of SIMULATOR_SETTINGS) {
    const url = env[name] ? loopbackUrlIn(env[name]) : undefined;
    if (url) found.set(name, url);
  }
  return found;
}

/**
 * Settings to override so that the app talks to a simulator at `simulatorUrl` (another port, in tests): each
 * simulator setting on loopback gets that origin, path kept.
 */
export function settingsForSimulator(
  simulatorUrl: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const origin = new URL(simulatorUrl).origin;
  const overrides: Record<string, string> = {};
  for (const [name, url] of simulatorUrlsIn(env)) {
    const value = env[name]!;
    if (url.origin !== origin) overrides[name] = origin + value.slice(url.origin.length);
  }
  return overrides;
}

export type SimulatorPlan = { start: true; port: number; note: string } | { start: false; note?: string };

const portOf = (url: URL): number => Number(url.port || (url.protocol === "https:" ? 443 : 80));

/**
 * Start the simulator on the port the settings name, only when nothing listens there yet (someone may run
 * `npm run emulators`, or another devhost with its simulator). Settings that name different ports cannot all be
 * served by one simulator: it starts on the port most of them name, and the note says which settings it does not
 * serve. `listening` asks whether a port is taken.
 */
export async function planSimulator(
  env: NodeJS.ProcessEnv,
  listening: (port: number) => Promise<boolean> = isListening,
): Promise<SimulatorPlan> {
  const urls = simulatorUrlsIn(env);
  if (urls.size === 0) return { start: false };
  const byPort = new Map<number, string[]>();
  for (const [name, url] of urls) byPort.set(portOf(url), [...(byPort.get(portOf(url)) ?? []), name]);
  const [port] = [...byPort.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0])[0]!;
  const elsewhere = [...byPort.entries()].filter(([p]) => p !== port);
  const unserved = elsewhere.length
    ? ` Not served: ${elsewhere.map(([p, names]) => `${names.join(", ")} (port ${p})`).join("; ")}: one simulator serves every service, so point them all at one port.`
    : "";
  if (await listening(port)) {
    return {
      start: false,
      note: `remote services simulator: something already listens on 127.0.0.1:${port}; using it.${unserved}`,
    };
  }
  return { start: true, port, note: `remote services simulator: starting on 127.0.0.1:${port}.${unserved}` };
}
