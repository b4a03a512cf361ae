// The checks of `npm run infra:check` that the Bicep CLI cannot make: that the parameters file fits
// main.bicep, that the queue config the infrastructure is built from says what DESIGN §4 says,
// that every app setting of the contract is set, that no key or connection string is read
// anywhere, that write-local-settings.sh turns azd outputs into a usable local.settings.json, and
// that azd deploys the staged package of stage-package.sh with a complete production lockfile.
//
// Usage: node infra/scripts/check-contracts.mjs <main.json compiled from infra/main.bicep>

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { productionManifest } from "./production-manifest.mjs";

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
  "STATUS_QUEUES",
  "OPERATOR_AUTH",
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
  for (const name of requestQueues) {
    check(
      byName.get(name)?.RequiresDuplicateDetection === true,
      `queue "${name}" must have duplicate detection`,
    );
  }
  // Duplicate detection on orders would drop a conflicting version sent under the same MessageId unseen; the
  // app tells resends from conflicts itself.
  check(
    byName.get("orders")?.RequiresDuplicateDetection === false,
    'queue "orders" must not have duplicate detection',
  );
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

// azd zips the folder named by the service's `dist:`, which the prepackage hook must fill; the text of
// azure.yaml is matched line by line (no YAML parser among the dependencies, and the file is small).
function checkDeploymentPackage() {
  const azureYaml = fs.readFileSync(path.join(root, "azure.yaml"), "utf8");
  const script = fs.readFileSync(path.join(root, "infra/scripts/stage-package.sh"), "utf8");
  const stagingDir = /^staging_dir="([^"]+)"$/m.exec(script)?.[1];
  check(stagingDir !== undefined, 'stage-package.sh must set staging_dir="<folder>"');
  const dist = /^ {4}dist: *(\S+) *$/m.exec(azureYaml)?.[1];
  check(
    dist === stagingDir,
    `azure.yaml's dist (${dist}) must be the folder stage-package.sh stages (${stagingDir})`,
  );
  check(
    /^ {4}remoteBuild: *false *$/m.test(azureYaml),
    "azure.yaml must set remoteBuild: false: the staged package carries its node_modules",
  );
  check(
    /^ {6}prepackage:\n(?: {8}.*\n)*? {8}run: *bash infra\/scripts\/stage-package\.sh *$/m.test(azureYaml),
    "azure.yaml must run `bash infra/scripts/stage-package.sh` as the service's prepackage hook",
  );
  const gitignore = fs.readFileSync(path.join(root, ".gitignore"), "utf8").split("\n");
  const firstSegment = stagingDir?.split("/")[0];
  check(
    gitignore.some((line) => line.trim() === `${firstSegment}/` || line.trim() === `/${firstSegment}/`),
    `.gitignore must ignore ${firstSegment}/, where the package is staged`,
  );
  // azd reads .funcignore from the project root and refuses remoteBuild: false if it excludes node_modules.
  const funcignore = fs.readFileSync(path.join(root, ".funcignore"), "utf8").split("\n");
  check(
    !funcignore.some((line) => /^(\*\*\/|\/)?node_modules\/?$/.test(line.trim())),
    ".funcignore must not list node_modules (azd rejects that with remoteBuild: false)",
  );

  const pkg = readJson(path.join(root, "package.json"));
  check(
    typeof pkg.main === "string" && pkg.main.startsWith("dist/src/"),
    `package.json "main" (${pkg.main}) must lie in dist/src, the only compiled folder staged`,
  );

  // The production manifest must keep every package a production package needs, or `npm ci --omit=dev`
  // in the staging folder fails (or, worse, succeeds without it).
  const lock = readJson(path.join(root, "package-lock.json"));
  const production = productionManifest(pkg, lock);
  check(
    !("devDependencies" in production.pkg) && !("scripts" in production.pkg) && !("bin" in production.pkg),
    "the staged package.json must carry no devDependencies, scripts or bin",
  );
  check(
    JSON.stringify(production.lock.packages[""].dependencies) === JSON.stringify(pkg.dependencies),
    "the staged lockfile's root must declare the same dependencies as package.json",
  );
  const kept = production.lock.packages;
  const devEntries = Object.entries(kept).filter(([, entry]) => entry.dev === true);
  check(devEntries.length === 0, `the staged lockfile keeps dev packages: ${devEntries.map(([l]) => l)}`);
  const unresolved = unresolvedDependencies(kept);
  check(
    unresolved.length === 0,
    `the staged lockfile misses packages production needs: ${unresolved.slice(0, 5).join(", ")}`,
  );
  check(Object.keys(kept).length > 1, "the staged lockfile holds no production packages");
}

// Every required dependency of every package resolves to an entry of the lockfile, the way Node looks
// it up: in the package's own node_modules, then in each enclosing node_modules up to the root.
function unresolvedDependencies(packages) {
  const missing = [];
  for (const [location, entry] of Object.entries(packages)) {
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const required = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers[name]?.optional),
    ];
    for (const name of required) {
      let dir = location;
      let found = false;
      for (;;) {
        if (`${dir ? `${dir}/` : ""}node_modules/${name}` in packages) {
          found = true;
          break;
        }
        if (!dir) break;
        const cut = dir.lastIndexOf("/node_modules/");
        dir = cut < 0 ? "" : dir.slice(0, cut);
      }
      if (!found) missing.push(`${name} (needed by ${location || "the app"})`);
    }
  }
  return missing;
}

// ---- What Azure would be asked to create (bicep snapshot, evaluated offline) ----

const SERVICE_BUS_SENDING_ROLES = {
  "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39": "Azure Service Bus Data Sender",
  "090c5cfd-751d-490a-894a-3ce6f1109419": "Azure Service Bus Data Owner",
};
// Role assignments in a snapshot name their principal as a literal id (a parameter) or as a reference
// to a resource created in the same deployment: the app's user-assigned identity is the latter.
const isAppIdentity = (principalId) =>
  /^\[reference\('[^']*\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/id-/.test(principalId);

// The scope an assignment applies to: the first argument of extensionResourceId(...), or the part of a
// literal id before /providers/Microsoft.Authorization/roleAssignments.
function assignmentScope(id) {
  const call = /^\[extensionResourceId\('([^']+)'/.exec(id);
  if (call) return call[1];
  return id.split("/providers/Microsoft.Authorization/roleAssignments/")[0];
}

function predicted(snapshot, type) {
  return snapshot.predictedResources.filter((r) => r.type === type);
}

// A reply on agent-replies with every field right is indistinguishable from an agent's, so the trust
// boundary is who may send there: nobody but the app. The same goes for the agent request queues, whose
// messages become remote calls. A grant on the namespace or above covers them too.
function checkSendRights(snapshot, label) {
  const guarded = ["agent-replies", "inventory-requests", "payment-requests", "shipping-requests"];
  let senders = 0;
  for (const assignment of predicted(snapshot, "Microsoft.Authorization/roleAssignments")) {
    const role = assignment.properties.roleDefinitionId.split("/").pop();
    if (!(role in SERVICE_BUS_SENDING_ROLES)) continue;
    const scope = assignmentScope(assignment.id);
    const queue = /\/Microsoft\.ServiceBus\/namespaces\/[^/]+\/queues\/([^/]+)$/.exec(scope)?.[1];
    const coversGuarded = queue === undefined || guarded.includes(queue);
    if (!coversGuarded) continue;
    senders += 1;
    check(
      isAppIdentity(assignment.properties.principalId),
      `${label}: ${SERVICE_BUS_SENDING_ROLES[role]} on ${queue ?? scope} goes to ${assignment.properties.principalId}, not the app's identity`,
    );
  }
  check(
    senders === guarded.length,
    `${label}: expected the app to send to ${guarded.join(", ")}, found ${senders} grants`,
  );
}

function appSettingsOf(snapshot) {
  return (
    predicted(snapshot, "Microsoft.Web/sites/config").find((r) => r.name.endsWith("/appsettings"))
      ?.properties ?? {}
  );
}

function checkOperatorSignIn(snapshot, label, clientId) {
  const settings = appSettingsOf(snapshot);
  check(
    settings.OPERATOR_AUTH === "platform",
    `${label}: OPERATOR_AUTH must be platform, got ${settings.OPERATOR_AUTH}`,
  );
  check(
    settings.STATUS_QUEUES === "status-demo",
    `${label}: STATUS_QUEUES must list the status queues, got ${settings.STATUS_QUEUES}`,
  );
  const auth = predicted(snapshot, "Microsoft.Web/sites/config").find((r) =>
    r.name.endsWith("/authsettingsV2"),
  );
  if (!clientId) {
    check(auth === undefined, `${label}: without operatorAppClientId there must be no authsettingsV2`);
    return;
  }
  const p = auth?.properties;
  check(p?.platform?.enabled === true, `${label}: the platform's authentication must be on`);
  check(
    p?.globalValidation?.requireAuthentication === false &&
      p?.globalValidation?.unauthenticatedClientAction === "AllowAnonymous",
    `${label}: unauthenticated requests must reach the app (function-key clients, health); the app answers 401 itself`,
  );
  const aad = p?.identityProviders?.azureActiveDirectory;
  check(
    aad?.enabled === true && aad?.registration?.clientId === clientId,
    `${label}: Entra ID sign-in with ${clientId}`,
  );
  check(
    aad?.registration?.clientSecretSettingName === undefined,
    `${label}: sign-in must need no client secret`,
  );
}

function checkSnapshots(files) {
  for (const file of files) {
    const snapshot = readJson(file);
    const label = path.basename(file, ".snapshot.json");
    const clientId = /operatorAppClientId = '([^']*)'/.exec(
      fs.readFileSync(file.replace(/\.snapshot\.json$/, ".bicepparam"), "utf8"),
    )?.[1];
    checkSendRights(snapshot, label);
    checkOperatorSignIn(snapshot, label, clientId);
  }
}

const templateFile = process.argv[2];
if (!templateFile) {
  console.error("usage: node infra/scripts/check-contracts.mjs <compiled main.json> [<snapshot.json> ...]");
  process.exit(2);
}
const templateText = fs.readFileSync(templateFile, "utf8");
const template = JSON.parse(templateText);

checkParametersFile(template);
checkQueueConfig();
checkAppSettingsAndSecrets(templateText);
checkLocalSettingsScript(template);
checkDeploymentPackage();
checkSnapshots(process.argv.slice(3));

for (const failure of failures) console.error(`contracts: FAIL ${failure}`);
console.log(`contracts: ${passed + failures.length} checks, ${failures.length} failing`);
process.exit(failures.length === 0 ? 0 : 1);
