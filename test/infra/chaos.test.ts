/**
 * Chaos in the agents' calls (docs/chaos.md): off in every deployment that does not ask for it; in a staging
 * environment that does, its parameters reach the app settings, and appSettingOverrides cannot change them.
 */
import { beforeAll, expect, it } from "vitest";
import {
  appSettingsOf,
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  DEPLOYMENTS,
  describeWithBicep,
  type CompiledInfra,
} from "../support/infra";

const CHAOS_SETTINGS = [
  "AZURE_FUNCTIONS_ENVIRONMENT",
  "CHAOS_ENABLED",
  "CHAOS_SERVICES",
  "CHAOS_LATENCY_RATE",
  "CHAOS_FAULT_RATE",
];

describeWithBicep("chaos in the deployed app", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  const chaosOff = DEPLOYMENT_NAMES.filter((name) => !DEPLOYMENTS[name].chaos);
  const chaosOn = DEPLOYMENT_NAMES.filter((name) => DEPLOYMENTS[name].chaos);

  const chaosSettings = (name: (typeof DEPLOYMENT_NAMES)[number]): Record<string, unknown> => {
    const settings = appSettingsOf(infra.snapshots[name]);
    return Object.fromEntries(CHAOS_SETTINGS.map((setting) => [setting, settings[setting]]));
  };

  it.each(chaosOff)("is off, in Production, unless the parameters ask for it (%s)", (name) => {
    expect(chaosSettings(name)).toEqual({
      AZURE_FUNCTIONS_ENVIRONMENT: "Production",
      CHAOS_ENABLED: "false",
      CHAOS_SERVICES: "*",
      CHAOS_LATENCY_RATE: "0",
      CHAOS_FAULT_RATE: "0",
    });
  });

  it.each(chaosOn)(
    "in staging, takes its parameters, not the appSettingOverrides that try to change them (%s)",
    (name) => {
      // The overrides ask for CHAOS_FAULT_RATE=1 and CHAOS_LATENCY_RATE=1.
      expect(chaosSettings(name)).toEqual({
        AZURE_FUNCTIONS_ENVIRONMENT: "Staging",
        CHAOS_ENABLED: "true",
        CHAOS_SERVICES: "payment",
        CHAOS_LATENCY_RATE: "0",
        CHAOS_FAULT_RATE: "0.05",
      });
    },
  );
});
