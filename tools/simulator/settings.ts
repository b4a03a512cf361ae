/**
 * How this app's settings point at the simulator: any value that is an http(s) URL on a loopback host and the
 * simulator's port 7081 (INVENTORY_URL, PAYMENT_URL, SHIPPING_URL, DASHBOARD_SIMULATOR_URL). Works by value, as
 * the devhost's emulator planning does, so renamed settings still count.
 */
import { isListening } from "devhost";
import { DEFAULT_SIMULATOR_PORT } from "./defaults";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** The URL when `value` points at the simulator's default loopback address, else undefined. */
export function simulatorUrlIn(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return LOOPBACK.has(url.hostname) && Number(url.port) === DEFAULT_SIMULATOR_PORT ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Whether any setting points at the simulator. */
export function settingsPointAtSimulator(env: NodeJS.ProcessEnv): boolean {
  return Object.values(env).some((value) => value !== undefined && simulatorUrlIn(value) !== undefined);
}

/**
 * Settings to override so that the app talks to a simulator at `simulatorUrl` (another port, in tests): each URL
 * that points at the default address gets that origin, path kept.
 */
export function settingsForSimulator(
  simulatorUrl: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const origin = new URL(simulatorUrl).origin;
  const overrides: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const url = value ? simulatorUrlIn(value) : undefined;
    if (value && url && url.origin !== origin) overrides[name] = origin + value.slice(url.origin.length);
  }
  return overrides;
}

export type SimulatorPlan = { start: true; port: number; note: string } | { start: false; note?: string };

/**
 * Start the simulator on its port only when the settings point at it and nothing listens there yet (someone may
 * run `npm run emulators`, or another devhost with its simulator). `listening` asks whether a port is taken.
 */
export async function planSimulator(
  env: NodeJS.ProcessEnv,
  listening: (port: number) => Promise<boolean> = isListening,
): Promise<SimulatorPlan> {
  if (!settingsPointAtSimulator(env)) return { start: false };
  const port = DEFAULT_SIMULATOR_PORT;
  if (await listening(port)) {
    return {
      start: false,
      note: `remote services simulator: something already listens on 127.0.0.1:${port}; using it.`,
    };
  }
  return { start: true, port, note: `remote services simulator: starting on 127.0.0.1:${port}.` };
}
