// The checks of `npm run infra:check` that the Bicep CLI cannot make: that the parameters file fits
// main.bicep, that the queue config the infrastructure is built from says what DESIGN §4 says,
// that every app setting of the contract is set, that no key or connection string is read
// anywhere, and that write-local-settings.sh turns azd outputs into a usable local.settings.json.
//
// Usage: node infra/scripts/check-contracts.mjs <main.json compiled from infra/main.bicep>

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const failures = [];
let passed = 0;

function check(condition, message) {
  if (condition) passed += 1;
  else failures.push(message);
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

// The settings every deployment must give the app (DESIGN §6 and the lead's additions).
const requiredAppSettings = [
  "AzureWebJobsStorage__accountName",
  "AzureWebJobsStorage__blobServiceUri",
  "AzureWebJobsStorage__queueServiceUri",
  "AzureWebJobsStorage__tableServiceUri",
  "AzureWebJobsStorage__credential",
  "AzureWebJobsStorage__clientId",
  "ServiceBusConnection__fullyQualifiedNamespace",
  "ServiceBusConnection__credential",
  "ServiceBusConnection__clientId",
  "CosmosConnection__accountEndpoint",
  "CosmosConnection__credential",
  "CosmosConnection__clientId",
  "APPLICATIONINSIGHTS_CONNECTION_STRING",
  "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
  "COSMOS_DATABASE",
  "TASK_HUB_NAME",
  "STARTER_SCHEDULE",
  "SUPERVISOR_SCHEDULE",
  "STEP_TIMEOUT_SECONDS",
  "CLAIM_TIMEOUT_SECONDS",
  "SUPERVISOR_MAX_FAILURES",
  "SUPERVISOR_BACKOFF_SECONDS",
  "SUPERVISOR_PAGE_SIZE",
  "SUPERVISOR_WINDOW_HOURS",
  "SUPERVISOR_LEASE_SECONDS",
  "MAX_IN_FLIGHT",
  "MAX_PENDING_BACKLOG",
  "RETRY_BUDGET_PER_STEP",
  "AGENT_MAX_ATTEMPTS",
  "AGENT_ATTEMPT_TIMEOUT_SECONDS",
  "AGENT_REQUEST_MAX_DELIVERY_COUNT",
  "MAX_REQUEST_BYTES",
  "STATUS_QUEUE_PREFIX",
  "INVENTORY_URL",
  "PAYMENT_URL",
  "SHIPPING_URL",
  "DURABLE_TASK_SCHEDULER_CONNECTION_STRING",
];

function checkParametersFile(template) {
  const file = path.join(root, "infra/main.parameters.json");
  const given = readJson(file).parameters;
  const declared = template.parameters;
  for (const name of Object.keys(given)) {
    check(name in declared, `main.parameters.json sets "${name}", which main.bicep does not declare`);
  }
  for (const [name, definition] of Object.entries(declared)) {
    if (!("defaultValue" in definition)) {
      check(
        name in given,
        `main.bicep parameter "${name}" has no default and main.parameters.json does not set it`,
      );
    }
  }
  const prefix = declared.statusQueuePrefix?.defaultValue;
  const statusQueues = given.statusQueues?.value ?? declared.statusQueues?.defaultValue ?? [];
  for (const queue of statusQueues) {
    check(
      queue.startsWith(prefix),
      `status queue "${queue}" does not start with STATUS_QUEUE_PREFIX "${prefix}"`,
    );
  }
}

// The infrastructure creates its queues from this file (modules/servicebus.bicep), so it must hold
// what DESIGN §4 fixes.
function checkQueueConfig() {
  const file = path.join(root, "devhost/emulators/servicebus/config.json");
  const queues = readJson(file).UserConfig.Namespaces[0].Queues;
  const byName = new Map(queues.map((q) => [q.Name, q.Properties]));
  const requestQueues = ["inventory-requests", "payment-requests", "shipping-requests"];
  for (const name of ["orders", ...requestQueues, "agent-replies", "alerts"]) {
    check(byName.has(name), `queue "${name}" is missing from ${path.relative(root, file)}`);
  }
  check(
    queues.some((q) => q.Name.startsWith("status-")),
    "the queue config has no status-* queue to use as the template",
  );
  for (const name of ["orders", ...requestQueues]) {
    check(
      byName.get(name)?.RequiresDuplicateDetection === true,
      `queue "${name}" must have duplicate detection`,
    );
  }
  const counts = new Set(requestQueues.map((name) => byName.get(name)?.MaxDeliveryCount));
  check(
    counts.size === 1,
    `the agent request queues must share one MaxDeliveryCount (AGENT_REQUEST_MAX_DELIVERY_COUNT), found ${[...counts]}`,
  );
}

function checkAppSettingsAndSecrets(templateText) {
  for (const name of requiredAppSettings) {
    check(new RegExp(`["']${name}["']`).test(templateText), `app setting ${name} is not set by main.bicep`);
  }
  // Identity-based connections only: nothing may read a key or carry one.
  for (const pattern of [/listKeys\(/i, /listConnectionStrings\(/i, /AccountKey=/i, /SharedAccessKey/i]) {
    check(!pattern.test(templateText), `the compiled template uses a key or connection string (${pattern})`);
  }
}

function runLocalSettings(tmp, values, args) {
  const valuesFile = path.join(tmp, "values.json");
  fs.writeFileSync(valuesFile, JSON.stringify(values));
  return spawnSync(
    "bash",
    [path.join(root, "infra/scripts/write-local-settings.sh"), "--values-json", valuesFile, ...args],
    {
      encoding: "utf8",
    },
  );
}

function checkLocalSettingsScript(template) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "infra-check-"));
  try {
    const clientId = "11111111-2222-3333-4444-555555555555";
    const appSettings = Object.fromEntries(requiredAppSettings.map((name) => [name, `value-of-${name}`]));
    Object.assign(appSettings, {
      ServiceBusConnection__credential: "managedidentity",
      ServiceBusConnection__clientId: clientId,
      DURABLE_TASK_SCHEDULER_CONNECTION_STRING: `Endpoint=https://dts.example.durabletask.io;Authentication=ManagedIdentity;ClientID=${clientId}`,
    });
    // What `azd env get-values --output json` prints: every output of main.bicep, objects as JSON strings.
    const values = Object.fromEntries(
      Object.keys(template.outputs).map((name) => [name, `value-of-${name}`]),
    );
    values.FUNCTION_APP_SETTINGS = JSON.stringify(appSettings);
    const output = path.join(tmp, "local.settings.json");

    const first = runLocalSettings(tmp, values, ["--output", output]);
    check(first.status === 0, `write-local-settings.sh failed: ${first.stderr.trim()}`);
    if (first.status !== 0) return;
    const local = readJson(output).Values;
    check(
      local.FUNCTIONS_WORKER_RUNTIME === "node",
      "local.settings.json must set FUNCTIONS_WORKER_RUNTIME=node",
    );
    check(
      local.ServiceBusConnection__fullyQualifiedNamespace ===
        appSettings.ServiceBusConnection__fullyQualifiedNamespace,
      "local.settings.json must keep the Service Bus namespace",
    );
    check(
      local.MAX_IN_FLIGHT === appSettings.MAX_IN_FLIGHT,
      "local.settings.json must keep the tuning settings",
    );
    check(
      !Object.keys(local).some((name) => /__(credential|clientId)$/.test(name)),
      "local.settings.json must not pin the managed identity (no __credential/__clientId)",
    );
    check(
      local.DURABLE_TASK_SCHEDULER_CONNECTION_STRING ===
        "Endpoint=https://dts.example.durabletask.io;Authentication=DefaultAzure",
      `the scheduler connection must use the developer credential, got ${local.DURABLE_TASK_SCHEDULER_CONNECTION_STRING}`,
    );
    check(
      !("APPLICATIONINSIGHTS_CONNECTION_STRING" in local),
      "local runs must not send telemetry to the cloud app",
    );

    const again = runLocalSettings(tmp, values, ["--output", output]);
    check(
      again.status !== 0,
      "write-local-settings.sh must refuse to replace an existing file without --force",
    );

    const azurite = runLocalSettings(tmp, values, ["--output", output, "--force", "--azurite"]);
    check(azurite.status === 0, `write-local-settings.sh --azurite failed: ${azurite.stderr.trim()}`);
    const local2 = readJson(output).Values;
    check(
      local2.AzureWebJobsStorage === "UseDevelopmentStorage=true",
      "--azurite must point host storage at Azurite",
    );
    check(
      !Object.keys(local2).some((name) => name.startsWith("AzureWebJobsStorage__")),
      "--azurite must drop the Azure host storage settings",
    );

    delete values.FUNCTION_APP_SETTINGS;
    const missing = runLocalSettings(tmp, values, ["--output", path.join(tmp, "other.json")]);
    check(
      missing.status !== 0 && /azd provision/.test(missing.stderr),
      "write-local-settings.sh must say what to do when the azd outputs are missing",
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const templateFile = process.argv[2];
if (!templateFile) {
  console.error("usage: node infra/scripts/check-contracts.mjs <compiled main.json>");
  process.exit(2);
}
const templateText = fs.readFileSync(templateFile, "utf8");
const template = JSON.parse(templateText);

checkParametersFile(template);
checkQueueConfig();
checkAppSettingsAndSecrets(templateText);
checkLocalSettingsScript(template);

for (const failure of failures) console.error(`contracts: FAIL ${failure}`);
console.log(`contracts: ${passed + failures.length} checks, ${failures.length} failing`);
process.exit(failures.length === 0 ? 0 : 1);
