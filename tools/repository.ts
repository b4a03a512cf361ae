/**
 * What the tools read from this repository, found from wherever they run (tools/ as sources, dist/tools compiled):
 * its root, the shipped settings (local.settings.sample.json), and the emulators' config files those settings
 * name. The settings are the one place that says which files configure the emulators, for the devhost and the
 * tools alike.
 */
import fs from "node:fs";
import path from "node:path";
import { COSMOS_CONFIG_SETTING, SERVICE_BUS_CONFIG_SETTING } from "devhost";

/** The nearest directory at or above `from` holding package-lock.json: the repository root (not a workspace). */
export function repositoryRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package-lock.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package-lock.json above ${from}`);
  }
}

/** `Values` of local.settings.sample.json: the settings the app ships with for local runs. */
export function sampleSettings(): Record<string, string> {
  const file = path.join(repositoryRoot(), "local.settings.sample.json");
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { Values?: Record<string, string> };
  if (!parsed.Values) throw new Error(`${file} has no "Values"`);
  return parsed.Values;
}

export interface EmulatorConfigFiles {
  /** The Service Bus emulator's queues, in the official emulator's Config.json format. */
  serviceBus: string;
  /** The Cosmos DB emulator's databases and containers. */
  cosmos: string;
}

/** The files the shipped settings name in DEVHOST_SERVICEBUS_CONFIG and DEVHOST_COSMOS_CONFIG, as absolute paths. */
export function emulatorConfigFiles(): EmulatorConfigFiles {
  const settings = sampleSettings();
  const file = (setting: string): string => {
    const value = settings[setting];
    if (!value) throw new Error(`local.settings.sample.json does not set ${setting}`);
    return path.resolve(repositoryRoot(), value);
  };
  return { serviceBus: file(SERVICE_BUS_CONFIG_SETTING), cosmos: file(COSMOS_CONFIG_SETTING) };
}
