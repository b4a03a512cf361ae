/**
 * The settings the app reads in Azure are set by infra/main.bicep: a setting left out falls back to its local
 * default, or stops the app at start, only once deployed.
 */
import { beforeAll, expect, it } from "vitest";
import {
  appSettingsOf,
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  DEPLOYMENTS,
  describeWithBicep,
  processServices,
  REQUIRED_APP_SETTINGS,
  type CompiledInfra,
} from "../support/infra";

describeWithBicep("the app settings main.bicep gives the app", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  it("include every setting of the contract (docs/configuration.md)", () => {
    // Searched in the whole template: some are set only with one backend or through a module's output.
    const missing = REQUIRED_APP_SETTINGS.filter(
      (name) => !new RegExp(`["']${name}["']`).test(infra.templateText),
    );
    expect(missing).toEqual([]);
  });

  it.each(DEPLOYMENT_NAMES)(
    "give each service's URL from serviceUrls, else its placeholder on .invalid (%s)",
    (name) => {
      const settings = appSettingsOf(infra.snapshots[name]);
      const given = DEPLOYMENTS[name].serviceUrls;
      for (const s of processServices) {
        expect(settings[s.urlSetting], s.urlSetting).toBe(given[s.name] ?? s.placeholderUrl);
      }
    },
  );
});
