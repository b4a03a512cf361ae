// Start-up phase 1: the app's settings into the environment, as func start applies them (file values under
// variables already set, explicit ones on top), and the principal of requests that carry none.
import path from "node:path";
import { parseSignedInAs, type ClientPrincipal } from "../auth";
import type { HostLogger } from "../logger";
import {
  applySettingsToEnv,
  findLocalSettingsFile,
  readLocalSettings,
  type LocalSettings,
} from "../settings";
import type { ShutdownSteps } from "./shutdown";

export interface SettingsOptions {
  appRoot: string;
  /** Default: local.settings.json next to host.json, else local.settings.sample.json. */
  settingsFile?: string;
  /** Win over the file and the environment. */
  settings?: Record<string, string>;
  /** Given explicitly (null: nobody); default the DEVHOST_SIGNED_IN_AS setting. */
  signedInAs?: ClientPrincipal | null;
}

export interface AppliedSettings {
  localSettings: LocalSettings | undefined;
  signedInAs: ClientPrincipal | null;
}

export function applyAppSettings(
  options: SettingsOptions,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): AppliedSettings {
  const settingsFile = options.settingsFile
    ? path.resolve(options.settingsFile)
    : findLocalSettingsFile(options.appRoot);
  const localSettings = settingsFile ? readLocalSettings(settingsFile) : undefined;
  logger.info(
    settingsFile ? `Settings: ${settingsFile}` : `Settings: no local.settings.json in ${options.appRoot}`,
  );
  shutdown.push(applySettingsToEnv(localSettings?.values ?? {}, options.settings ?? {}));
  const signedInAs = signedInPrincipal(options.signedInAs);
  if (signedInAs) {
    logger.info(
      `Requests without x-ms-client-principal act as ${signedInAs.name} (${signedInAs.roles.join(", ") || "no roles"})`,
    );
  }
  return { localSettings, signedInAs };
}

function signedInPrincipal(given: ClientPrincipal | null | undefined): ClientPrincipal | null {
  if (given !== undefined) return given;
  const setting = process.env.DEVHOST_SIGNED_IN_AS;
  return setting ? parseSignedInAs(setting) : null;
}
