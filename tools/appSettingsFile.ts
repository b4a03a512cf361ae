/**
 * infra/app-settings.json: the settings Azure ships with their values, as the settings table (src/config.ts) says,
 * for infra/main.bicep to read. test/unit/appSettingsFile.test.ts compares the file with the table; `npm run
 * docs:update` writes it. Pure: reading and writing the file is the caller's job.
 */
import { shippedAzureSettings } from "../src/config";

export const APP_SETTINGS_FILE = "infra/app-settings.json";

export function appSettingsJson() {
  return {
    $comment:
      "Generated from the settings table of src/config.ts by `npm run docs:update`: edit the table, never this file. Read by infra/main.bicep as the app settings Azure ships (before appSettingOverrides); the settings the infrastructure sets itself, and the local tools' own, are not here.",
    shipped: shippedAzureSettings(),
  };
}
