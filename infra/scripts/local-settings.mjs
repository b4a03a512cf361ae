// Turns the outputs of `azd provision` (JSON on stdin, as printed by `azd env get-values --output json`)
// into local.settings.json, so that `func start` runs the app on this machine against the Azure
// resources, signed in as the developer (az login) instead of the app's managed identity.
//
// Usage: node infra/scripts/local-settings.mjs --output <path> [--azurite] [--force] < values.json
// Called by write-local-settings.sh; kept free of dependencies so it runs before `npm install`.

import { randomBytes } from "node:crypto";
import fs from "node:fs";

function fail(message) {
  console.error(`local-settings: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const options = { output: "local.settings.json", azurite: false, force: false };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--output") {
      const value = argv[i + 1];
      if (!value) fail("--output needs a file path");
      options.output = value;
      i += 1;
    } else if (arg === "--azurite") {
      options.azurite = true;
    } else if (arg === "--force") {
      options.force = true;
    } else {
      fail(`unknown argument "${arg}"; expected --output <path>, --azurite or --force`);
    }
  }
  return options;
}

// azd stores an object output as a JSON string; accept both forms.
function readAppSettings(values) {
  const raw = values.FUNCTION_APP_SETTINGS;
  if (raw === undefined || raw === "") {
    fail("FUNCTION_APP_SETTINGS is missing from the azd environment: run `azd provision` first");
  }
  let settings = raw;
  if (typeof raw === "string") {
    try {
      settings = JSON.parse(raw);
    } catch (error) {
      fail(`FUNCTION_APP_SETTINGS is not JSON (${error.message})`);
    }
  }
  if (settings === null || typeof settings !== "object" || Array.isArray(settings)) {
    fail("FUNCTION_APP_SETTINGS must be an object of app setting names to string values");
  }
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value !== "string") fail(`app setting ${name} must be a string, got ${typeof value}`);
  }
  return settings;
}

// The deployed app authenticates as its user-assigned identity; on a developer machine there is no
// managed identity, so the identity-specific parts are dropped and the Functions host and the
// Azure SDKs fall back to the developer's credential (az login / azd auth login).
function toLocal(settings, { azurite }) {
  const local = {};
  for (const [name, value] of Object.entries(settings)) {
    if (/__(credential|clientId)$/.test(name)) continue;
    // Telemetry ingestion accepts only the app identity (local auth is disabled): keep local runs out of it.
    if (name.startsWith("APPLICATIONINSIGHTS_")) continue;
    if (azurite && name.startsWith("AzureWebJobsStorage__")) continue;
    // func start does not resolve Key Vault references (the paging keys).
    if (value.startsWith("@Microsoft.KeyVault(")) continue;
    local[name] = value;
  }
  // The paging key only signs the continuation tokens this run gives, which need not be the deployed app's:
  // a key of its own, new whenever the file is written.
  local.PAGING_TOKEN_KEY = randomBytes(48).toString("base64url");
  if (azurite) local.AzureWebJobsStorage = "UseDevelopmentStorage=true";
  if (local.DURABLE_TASK_SCHEDULER_CONNECTION_STRING) {
    local.DURABLE_TASK_SCHEDULER_CONNECTION_STRING = local.DURABLE_TASK_SCHEDULER_CONNECTION_STRING.replace(
      /Authentication=ManagedIdentity;ClientID=[^;]*/i,
      "Authentication=DefaultAzure",
    );
    // In Azure the deployed host.json names the scheduler (deployed-host-json.mjs); the repository's host.json,
    // which func start reads here, names the Azure Storage backend. Locally no scale controller reads host.json,
    // so the host's own override of it is the simple way to use the environment's scheduler.
    local.AzureFunctionsJobHost__extensions__durableTask__storageProvider__type = "azureManaged";
    local.AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName =
      "DURABLE_TASK_SCHEDULER_CONNECTION_STRING";
  }
  local.FUNCTIONS_WORKER_RUNTIME = "node";
  // No platform sign-in in front of func start: operator routes take x-ms-client-principal as the caller sends it.
  local.OPERATOR_AUTH = "header";
  return Object.fromEntries(Object.entries(local).sort(([a], [b]) => a.localeCompare(b)));
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  let values;
  try {
    values = JSON.parse(fs.readFileSync(0, "utf8"));
  } catch (error) {
    fail(`stdin is not the JSON of \`azd env get-values --output json\` (${error.message})`);
  }
  const local = toLocal(readAppSettings(values), options);
  if (fs.existsSync(options.output) && !options.force) {
    fail(`${options.output} exists; pass --force to replace it`);
  }
  fs.writeFileSync(options.output, `${JSON.stringify({ IsEncrypted: false, Values: local }, null, 2)}\n`);
  console.log(`local-settings: wrote ${Object.keys(local).length} settings to ${options.output}`);
  if (values.AZURE_FUNCTION_APP_NAME && values.AZURE_RESOURCE_GROUP) {
    console.log(
      "local-settings: the deployed app consumes the same queues and task hub; stop it while you run locally:\n" +
        `  az functionapp stop -g ${values.AZURE_RESOURCE_GROUP} -n ${values.AZURE_FUNCTION_APP_NAME}`,
    );
  }
}

main();
