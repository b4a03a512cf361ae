/**
 * The settings the app reads in Azure are set by infra/main.bicep: a setting left out falls back to its local
 * default, or stops the app at start, only once deployed.
 */
import { beforeAll, expect, it } from "vitest";
import { HOST_BODY_LIMIT_SETTING, hostRequestBodyLimit, loadConfig } from "../../src/config";
import { serviceUrlSetting } from "../../src/domain";
import { sampleSettings } from "../../tools/repository";
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
    "say where the services are from remoteServicesUrl and serviceUrlList, else a placeholder on .invalid (%s)",
    (name) => {
      const settings = appSettingsOf(infra.snapshots[name]);
      const { remoteServicesUrl, serviceUrlList } = DEPLOYMENTS[name].serviceUrls;
      expect(settings.REMOTE_SERVICES_URL).toBe(
        remoteServicesUrl ?? "https://remote-services.example.invalid",
      );
      expect(settings.SERVICE_URLS).toBe(serviceUrlList ?? "");
      // No service's own <SERVICE>_URL: the app derives each one, so the template names none of them.
      for (const s of processServices) expect(settings, s.name).not.toHaveProperty(serviceUrlSetting(s.name));
    },
  );

  it.each(DEPLOYMENT_NAMES)(
    "give the host a body limit derived from MAX_REQUEST_BYTES, an override of it included (%s)",
    (name) => {
      const settings = appSettingsOf(infra.snapshots[name]);
      expect(settings[HOST_BODY_LIMIT_SETTING]).toBe(
        String(hostRequestBodyLimit(Number(settings.MAX_REQUEST_BYTES))),
      );
    },
  );

  it("are ones the app accepts: its config reads where each service is", () => {
    const settings = appSettingsOf(infra.snapshots["with-scheduler"]);
    const { remoteServicesUrl } = DEPLOYMENTS["with-scheduler"].serviceUrls;
    const urls: Record<string, string> = loadConfig({
      ...sampleSettings(),
      REMOTE_SERVICES_URL: String(settings.REMOTE_SERVICES_URL),
      SERVICE_URLS: String(settings.SERVICE_URLS),
    }).serviceUrls;
    const [first, ...others] = processServices;
    expect(urls[first!.name]).toBe(`https://${first!.name}.contoso.example`);
    for (const s of others) expect(urls[s.name]).toBe(`${remoteServicesUrl}/${s.name}`);
  });
});
