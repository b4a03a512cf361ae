/**
 * infra/app-settings.json is what the settings table says Azure ships, so a setting added to src/config.ts reaches
 * infra/main.bicep without a list kept by hand. `npm run docs:update` rewrites it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import prettier from "prettier";
import { expect, it } from "vitest";
import { SETTINGS_BY_ORIGIN, SETTING_NAMES, shippedAzureSettings } from "../../src/config";

const UPDATE = process.env.UPDATE_DOCS === "1";

const APP_SETTINGS_FILE = "infra/app-settings.json";

function appSettingsJson() {
  return {
    $comment:
      "Generated from the settings table of src/config.ts by `npm run docs:update`: edit the table, never this file. Read by infra/main.bicep as the app settings Azure ships (before appSettingOverrides); the settings the infrastructure sets itself, and the local tools' own, are not here.",
    shipped: shippedAzureSettings(),
  };
}

it(`${APP_SETTINGS_FILE} is what the settings table ships`, async () => {
  const options = await prettier.resolveConfig(APP_SETTINGS_FILE);
  const expected = await prettier.format(JSON.stringify(appSettingsJson()), {
    ...options,
    filepath: APP_SETTINGS_FILE,
  });
  if (UPDATE) writeFileSync(APP_SETTINGS_FILE, expected);
  const current = existsSync(APP_SETTINGS_FILE) ? readFileSync(APP_SETTINGS_FILE, "utf8") : "";
  expect(current, `${APP_SETTINGS_FILE} is stale: run \`npm run docs:update\``).toBe(expected);
});

it("gives every setting of the table one origin in Azure: shipped, set by the infrastructure, or local", () => {
  const shipped = Object.keys(appSettingsJson().shipped);
  const all = [...shipped, ...SETTINGS_BY_ORIGIN.infrastructure, ...SETTINGS_BY_ORIGIN.local];
  expect([...all].sort()).toEqual([...SETTING_NAMES].sort());
});
