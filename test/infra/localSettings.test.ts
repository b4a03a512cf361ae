/**
 * infra/scripts/write-local-settings.sh, which turns the outputs of `azd provision` into local.settings.json for
 * `func start` against the Azure resources, signed in as the developer rather than the app's managed identity.
 * Fed what `azd env get-values --output json` would print for the compiled main.bicep's outputs.
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import {
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  deployedHostJsonModule,
  describeWithBicep,
  REQUIRED_APP_SETTINGS,
  ROOT,
} from "../support/infra";

const { SCHEDULER_CONNECTION_SETTING } = await deployedHostJsonModule();
const CLIENT_ID = "11111111-2222-3333-4444-555555555555";
const CONNECTIONS = {
  ServiceBusConnection: "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v",
  CosmosConnection: "AccountEndpoint=https://localhost:8081/;AccountKey=a2V5;",
};
const PAGING_KEY_URI = "https://kv-x.vault.azure.net/secrets/paging-token-key";

/** The app settings main.bicep's FUNCTION_APP_SETTINGS output holds, with the identity-bound ones as Azure has them. */
const appSettings: Record<string, string> = {
  ...Object.fromEntries(REQUIRED_APP_SETTINGS.map((name) => [name, `value-of-${name}`])),
  ServiceBusConnection__credential: "managedidentity",
  ServiceBusConnection__clientId: CLIENT_ID,
  [SCHEDULER_CONNECTION_SETTING]: `Endpoint=https://dts.example.durabletask.io;Authentication=ManagedIdentity;ClientID=${CLIENT_ID}`,
  PAGING_TOKEN_KEY: `@Microsoft.KeyVault(SecretUri=${PAGING_KEY_URI})`,
  PAGING_TOKEN_PREVIOUS_KEY: `@Microsoft.KeyVault(SecretUri=${PAGING_KEY_URI}/0123456789abcdef0123456789abcdef)`,
};

describeWithBicep("write-local-settings.sh", () => {
  let dir: string;
  let values: Record<string, string>;

  beforeAll(async () => {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "write-local-settings-"));
    const { template } = await compiledInfra();
    // azd prints every output of main.bicep, objects as JSON strings.
    values = Object.fromEntries(Object.keys(template.outputs).map((name) => [name, `value-of-${name}`]));
    values.FUNCTION_APP_SETTINGS = JSON.stringify(appSettings);
  }, COMPILE_TIMEOUT_MS);
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function writeLocalSettings(given: Record<string, string>, args: string[]): SpawnSyncReturns<string> {
    const valuesFile = path.join(dir, "values.json");
    fs.writeFileSync(valuesFile, JSON.stringify(given));
    return spawnSync(
      "bash",
      [path.join(ROOT, "infra/scripts/write-local-settings.sh"), "--values-json", valuesFile, ...args],
      { encoding: "utf8" },
    );
  }
  const readValues = (file: string): Record<string, string> =>
    (JSON.parse(fs.readFileSync(file, "utf8")) as { Values: Record<string, string> }).Values;

  it("writes settings for the Node.js worker that keep the app's connections and tuning, not its identity", () => {
    const output = path.join(dir, "identity.json");
    const run = writeLocalSettings(values, ["--output", output]);
    expect(run.status, run.stderr).toBe(0);
    const local = readValues(output);
    expect(local.FUNCTIONS_WORKER_RUNTIME).toBe("node");
    expect(local.ServiceBusConnection__fullyQualifiedNamespace).toBe(
      appSettings.ServiceBusConnection__fullyQualifiedNamespace,
    );
    expect(local.MAX_IN_FLIGHT).toBe(appSettings.MAX_IN_FLIGHT);
    // The developer's az login signs in, not the app's managed identity.
    expect(Object.keys(local).filter((name) => /__(credential|clientId)$/.test(name))).toEqual([]);
    // Local runs must not send telemetry to the cloud app's Application Insights.
    expect(local).not.toHaveProperty("APPLICATIONINSIGHTS_CONNECTION_STRING");
  });

  it("points func start's Durable extension at the scheduler, with the developer's credential", () => {
    const output = path.join(dir, "scheduler.json");
    const run = writeLocalSettings(values, ["--output", output]);
    expect(run.status, run.stderr).toBe(0);
    const local = readValues(output);
    expect(local[SCHEDULER_CONNECTION_SETTING]).toBe(
      "Endpoint=https://dts.example.durabletask.io;Authentication=DefaultAzure",
    );
    // The repository's host.json names Azure Storage; the deployed one is not what func start reads.
    expect(local.AzureFunctionsJobHost__extensions__durableTask__storageProvider__type).toBe("azureManaged");
    expect(local.AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName).toBe(
      SCHEDULER_CONNECTION_SETTING,
    );
  });

  it("gives func start, which resolves no Key Vault reference, a paging key of its own that the app accepts", () => {
    const first = path.join(dir, "paging-1.json");
    const second = path.join(dir, "paging-2.json");
    for (const output of [first, second])
      expect(writeLocalSettings(values, ["--output", output]).status).toBe(0);
    const [one, two] = [readValues(first), readValues(second)];
    expect(Object.values(one).filter((value) => value.startsWith("@Microsoft.KeyVault("))).toEqual([]);
    expect(one).not.toHaveProperty("PAGING_TOKEN_PREVIOUS_KEY");
    // The other values here are placeholders: the key alone, with connections loadConfig takes.
    expect(loadConfig({ ...CONNECTIONS, PAGING_TOKEN_KEY: one.PAGING_TOKEN_KEY }).pagingKeys).toEqual({
      current: one.PAGING_TOKEN_KEY,
      previous: null,
    });
    expect(two.PAGING_TOKEN_KEY).not.toBe(one.PAGING_TOKEN_KEY);
  });

  it("refuses to replace an existing file without --force", () => {
    const output = path.join(dir, "existing.json");
    expect(writeLocalSettings(values, ["--output", output]).status).toBe(0);
    expect(writeLocalSettings(values, ["--output", output]).status).not.toBe(0);
  });

  it("with --azurite, keeps host storage in Azurite and drops the Azure host storage settings", () => {
    const output = path.join(dir, "azurite.json");
    expect(writeLocalSettings(values, ["--output", output]).status).toBe(0);
    const run = writeLocalSettings(values, ["--output", output, "--force", "--azurite"]);
    expect(run.status, run.stderr).toBe(0);
    const local = readValues(output);
    expect(local.AzureWebJobsStorage).toBe("UseDevelopmentStorage=true");
    expect(Object.keys(local).filter((name) => name.startsWith("AzureWebJobsStorage__"))).toEqual([]);
  });

  it("says to run azd provision when the azd outputs are missing", () => {
    const { FUNCTION_APP_SETTINGS: _dropped, ...withoutSettings } = values;
    const run = writeLocalSettings(withoutSettings, ["--output", path.join(dir, "missing.json")]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/azd provision/);
  });
});
