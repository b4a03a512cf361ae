/**
 * The operators' sign-in in Azure (docs/deployment.md): the platform's Entra ID sign-in when an app registration is
 * given, none otherwise, and the app told to trust the platform's principal in both cases.
 */
import { beforeAll, expect, it } from "vitest";
import {
  appSettingsOf,
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  DEPLOYMENTS,
  describeWithBicep,
  predicted,
  type CompiledInfra,
  type Snapshot,
} from "../support/infra";

interface AuthSettingsV2 {
  platform?: { enabled?: boolean };
  globalValidation?: { requireAuthentication?: boolean; unauthenticatedClientAction?: string };
  identityProviders?: {
    azureActiveDirectory?: {
      enabled?: boolean;
      registration?: { clientId?: string; clientSecretSettingName?: string };
    };
  };
}

function authSettings(snapshot: Snapshot): AuthSettingsV2 | undefined {
  const resource = predicted(snapshot, "Microsoft.Web/sites/config").find((r) =>
    r.name.endsWith("/authsettingsV2"),
  );
  return resource && ((resource.properties ?? {}) as AuthSettingsV2);
}

const withSignIn = DEPLOYMENT_NAMES.filter((name) => DEPLOYMENTS[name].operatorAppClientId);
const withoutSignIn = DEPLOYMENT_NAMES.filter((name) => !DEPLOYMENTS[name].operatorAppClientId);

describeWithBicep("operators' sign-in", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  it.each(DEPLOYMENT_NAMES)(
    "has the app take operators from the platform (OPERATOR_AUTH=platform) and list the status queues (%s)",
    (name) => {
      const settings = appSettingsOf(infra.snapshots[name]);
      expect(settings.OPERATOR_AUTH).toBe("platform");
      expect(settings.STATUS_QUEUES).toBe("status-demo");
    },
  );

  it.each(withSignIn)("turns on Entra ID sign-in with the given app registration, no secret (%s)", (name) => {
    const auth = authSettings(infra.snapshots[name]);
    expect(auth?.platform?.enabled).toBe(true);
    const aad = auth?.identityProviders?.azureActiveDirectory;
    expect(aad?.enabled).toBe(true);
    expect(aad?.registration?.clientId).toBe(DEPLOYMENTS[name].operatorAppClientId);
    expect(aad?.registration?.clientSecretSettingName).toBeUndefined();
  });

  // Function-key clients and the health probe carry no sign-in; the app answers 401 to an operator request itself.
  it.each(withSignIn)("lets unauthenticated requests reach the app (%s)", (name) => {
    expect(authSettings(infra.snapshots[name])?.globalValidation).toMatchObject({
      requireAuthentication: false,
      unauthenticatedClientAction: "AllowAnonymous",
    });
  });

  it.each(withoutSignIn)("sets up no platform authentication without operatorAppClientId (%s)", (name) => {
    expect(authSettings(infra.snapshots[name])).toBeUndefined();
  });
});
