/**
 * The paging key in Azure (docs/deployment.md, "The paging key"): a secret of a Key Vault with RBAC only, read by
 * the app's identity through a Key Vault reference the overrides cannot replace, and kept across deployments by
 * azd reading it back; the previous key, during a rotation, a fixed version of the same secret.
 */
import { beforeAll, expect, it } from "vitest";
import { MIN_PAGING_KEY_LENGTH } from "../../src/config";
import {
  appSettingsOf,
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  DEPLOYMENTS,
  describeWithBicep,
  isAppIdentity,
  predicted,
  readJson,
  roleAssignments,
  type CompiledInfra,
  type PredictedResource,
  type Snapshot,
} from "../support/infra";

type Site = PredictedResource & { identity?: { userAssignedIdentities?: Record<string, unknown> } };

const SECRETS_USER = "4633458b-17de-408a-b874-0445c86b69e6";
const SECRETS_OFFICER = "b86a8fe4-44ce-4948-aee5-eccb2c155cd7";
/** The principalId every parameter set passes (test/support/infra.ts): the developer who runs azd. */
const DEVELOPER = "11111111-1111-1111-1111-111111111111";

const vaultOf = (snapshot: Snapshot) => {
  const vaults = predicted(snapshot, "Microsoft.KeyVault/vaults");
  expect(vaults).toHaveLength(1);
  return vaults[0]!;
};
const secretOf = (snapshot: Snapshot) => {
  const secrets = predicted(snapshot, "Microsoft.KeyVault/vaults/secrets");
  expect(secrets.map((s) => s.name)).toEqual([`${vaultOf(snapshot).name}/paging-token-key`]);
  return secrets[0]!;
};

/** A Key Vault reference to the secret, as the snapshot spells it: its URI, then the version, if any. */
const reference = (secretId: string, version?: string): string =>
  version === undefined
    ? `[format('@Microsoft.KeyVault(SecretUri={0})', reference('${secretId}', '2023-07-01').secretUri)]`
    : `[format('@Microsoft.KeyVault(SecretUri={0}/{1})', reference('${secretId}', '2023-07-01').secretUri, '${version}')]`;

describeWithBicep("the paging key in Key Vault", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  it.each(DEPLOYMENT_NAMES)(
    "is a Key Vault reference to the latest version, resolved with the app's identity (%s)",
    (name) => {
      const snapshot = infra.snapshots[name];
      const settings = appSettingsOf(snapshot);
      expect(settings.PAGING_TOKEN_KEY).toBe(reference(secretOf(snapshot).id));
      const [site] = predicted(snapshot, "Microsoft.Web/sites") as Site[];
      const identity = site!.properties?.keyVaultReferenceIdentity as string;
      expect(identity).toMatch(/\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/id-[a-z0-9]+$/);
      // The identity the site runs as: it has no other.
      expect(Object.keys(site!.identity?.userAssignedIdentities ?? {})).toEqual([identity]);
    },
  );

  it.each(DEPLOYMENT_NAMES)(
    "reads the previous key only during a rotation, as a fixed version of the same secret (%s)",
    (name) => {
      const snapshot = infra.snapshots[name];
      const version = DEPLOYMENTS[name].previousKeyVersion;
      const settings = appSettingsOf(snapshot);
      if (version === undefined) expect(settings).not.toHaveProperty("PAGING_TOKEN_PREVIOUS_KEY");
      else expect(settings.PAGING_TOKEN_PREVIOUS_KEY).toBe(reference(secretOf(snapshot).id, version));
    },
  );

  it.each(DEPLOYMENT_NAMES)(
    "keeps it in a vault with RBAC only, readable by the app, and by the developer who runs azd and rotates it (%s)",
    (name) => {
      const snapshot = infra.snapshots[name];
      const vault = vaultOf(snapshot);
      expect(vault.properties).toMatchObject({ enableRbacAuthorization: true });
      expect(vault.properties).not.toHaveProperty("accessPolicies");
      const secret = secretOf(snapshot);
      const onVault = roleAssignments(snapshot).filter((a) => a.scope.startsWith(vault.id));
      // Every grant is on the one secret, not on the vault.
      expect(onVault.map((a) => a.scope)).toEqual([secret.id, secret.id]);
      expect(onVault.filter((a) => isAppIdentity(a.principalId)).map((a) => a.roleId)).toEqual([
        SECRETS_USER,
      ]);
      expect(onVault.filter((a) => a.principalId === DEVELOPER).map((a) => a.roleId)).toEqual([
        SECRETS_OFFICER,
      ]);
    },
  );

  it("stores the key azd read back as it is, and makes a short or missing one long enough from random GUIDs", () => {
    const template = JSON.parse(infra.templateText) as { variables: Record<string, unknown> };
    expect(template.variables.minPagingKeyLength).toBe(MIN_PAGING_KEY_LENGTH);
    // A snapshot leaves a given secure parameter unevaluated: the rule, as compiled.
    expect(template.variables.pagingKey).toBe(
      "[if(greaterOrEquals(length(parameters('pagingTokenKey')), variables('minPagingKeyLength')), " +
        "parameters('pagingTokenKey'), format('{0}{1}', parameters('pagingTokenKey'), parameters('pagingTokenKeySeed')))]",
    );
    // Two GUIDs: 72 characters, 244 random bits; what a deployment given no key stores.
    expect(infra.template.parameters.pagingTokenKeySeed?.defaultValue).toBe(
      "[format('{0}{1}', newGuid(), newGuid())]",
    );
    for (const name of DEPLOYMENT_NAMES) {
      expect(secretOf(infra.snapshots[name]).properties?.value, name).toBe(
        "[format('{0}{1}', '', format('{0}{1}', newGuid(), newGuid()))]",
      );
    }
  });

  it("comes after appSettingOverrides in the settings, which therefore cannot replace it", () => {
    // The snapshot leaves a setting made of a module's output unevaluated: the union, as compiled.
    const settings = (infra.template.outputs.FUNCTION_APP_SETTINGS as { value: string }).value;
    const overrides = settings.indexOf("parameters('appSettingOverrides')");
    const secrets = settings.indexOf("union(createObject('PAGING_TOKEN_KEY', ");
    expect(settings.startsWith("[union(")).toBe(true);
    expect(overrides).toBeGreaterThan(0);
    expect(secrets).toBeGreaterThan(overrides);
    expect(settings.slice(secrets)).toMatch(/^union\(createObject\('PAGING_TOKEN_KEY', [^]*\)\]$/);
  });

  it("has azd pass the key back from the vault the template names in its outputs", () => {
    const given = readJson<{ parameters: Record<string, { value: unknown }> }>(
      "infra/main.parameters.json",
    ).parameters;
    expect(given.pagingTokenKey?.value).toBe(
      "$(secretOrRandomPassword ${AZURE_KEY_VAULT_NAME} paging-token-key)",
    );
    expect(infra.template.outputs).toHaveProperty("AZURE_KEY_VAULT_NAME");
    expect(infra.template.parameters.pagingTokenKey).toMatchObject({ type: "securestring" });
  });
});
