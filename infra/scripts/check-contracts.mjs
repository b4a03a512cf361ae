// The checks of `npm run infra:check` that the Bicep CLI cannot make: that the parameters file fits
// main.bicep, that the queue and container configs the infrastructure is built from (and the local
// emulators serve) say what the contract fixes (docs/architecture.md), that every app setting of the
// contract is set, that no key or connection string is read anywhere, that write-local-settings.sh
// turns azd outputs into a usable local.settings.json, and that azd deploys the package stage-package.sh
// stages, whose production install holds the app's production dependencies and nothing else.
//
// Usage: node infra/scripts/check-contracts.mjs <main.json compiled from infra/main.bicep>

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { deployedHostJson, SCHEDULER_CONNECTION_SETTING } from "./deployed-host-json.mjs";

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

// The process's remote services as src/domain/process.ts declares them (infra/process.json, which a unit test
// keeps in step with the declaration): each with its request queue, agent function and URL setting.
const processServices = readJson(path.join(root, "infra/process.json")).services;
const requestQueues = processServices.map((s) => s.requestQueue);

// The settings every deployment must give the app (docs/configuration.md).
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
  ...processServices.map((s) => s.urlSetting),
  "TRACE_SAMPLING_RATIO",
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

// The shipped settings name the emulators' config files, which the Bicep modules read too.
const sampleSettings = readJson(path.join(root, "local.settings.sample.json")).Values;
const configFile = (setting) => path.join(root, sampleSettings[setting] ?? "");

// The infrastructure creates its queues from this file (modules/servicebus.bicep), so it must hold
// the queues the app uses.
function checkQueueConfig() {
  const file = configFile("DEVHOST_SERVICEBUS_CONFIG");
  check(
    sampleSettings.DEVHOST_SERVICEBUS_CONFIG === "infra/servicebus-emulator.config.json",
    "local.settings.sample.json must name infra/servicebus-emulator.config.json (the file servicebus.bicep reads) in DEVHOST_SERVICEBUS_CONFIG",
  );
  const queues = readJson(file).UserConfig.Namespaces[0].Queues;
  const byName = new Map(queues.map((q) => [q.Name, q.Properties]));
  for (const name of ["orders", ...requestQueues, "agent-replies", "alerts", "rejected-messages"]) {
    check(byName.has(name), `queue "${name}" is missing from ${path.relative(root, file)}`);
  }
  check(
    queues.some((q) => q.Name.startsWith("status-")),
    "the queue config has no status-* queue to use as the template",
  );
  // Requests, the alerts a record decided and the refused messages set aside carry a MessageId that names one
  // thing: a re-send is a duplicate.
  for (const name of [...requestQueues, "alerts", "rejected-messages"]) {
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

// The infrastructure creates its containers from this file (modules/cosmos.bicep), in the database the app's
// settings name.
function checkContainerConfig(template) {
  check(
    sampleSettings.DEVHOST_COSMOS_CONFIG === "infra/cosmos-emulator.config.json",
    "local.settings.sample.json must name infra/cosmos-emulator.config.json (the file cosmos.bicep reads) in DEVHOST_COSMOS_CONFIG",
  );
  const databases = readJson(configFile("DEVHOST_COSMOS_CONFIG")).databases;
  check(databases.length === 1, `the Cosmos DB config must declare one database, found ${databases.length}`);
  const [database] = databases;
  const defaultName = template.parameters.cosmosDatabaseName?.defaultValue;
  check(
    database?.id === defaultName && database?.id === sampleSettings.COSMOS_DATABASE,
    `the Cosmos DB config's database (${database?.id}) must be main.bicep's cosmosDatabaseName (${defaultName}) and COSMOS_DATABASE (${sampleSettings.COSMOS_DATABASE})`,
  );
  const containers = database?.containers ?? [];
  check(
    JSON.stringify(containers.map((c) => c.id).sort()) === JSON.stringify(["leases", "orders", "state"]),
    `the Cosmos DB config must declare the orders, state and leases containers, found ${containers.map((c) => c.id)}`,
  );
  for (const c of containers) {
    check(
      JSON.stringify(c.partitionKey?.paths) === JSON.stringify(["/orderId"]),
      `container "${c.id}" must be partitioned on /orderId`,
    );
  }
  // The starter, the Supervisor and the operator listing sort on two fields: each needs its composite index.
  const composites = (containers.find((c) => c.id === "state")?.indexingPolicy?.compositeIndexes ?? []).map(
    (index) => index.map((p) => `${p.path} ${p.order}`).join(", "),
  );
  for (const needed of [
    "/processState ascending, /createdAt ascending",
    "/processState ascending, /completeBy ascending",
    "/updatedAt descending, /id descending",
    "/processState ascending, /updatedAt descending, /id descending",
  ]) {
    check(composites.includes(needed), `the state container lacks the composite index (${needed})`);
  }
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
      local.AzureFunctionsJobHost__extensions__durableTask__storageProvider__type === "azureManaged" &&
        local.AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName ===
          SCHEDULER_CONNECTION_SETTING,
      "with a scheduler, local.settings.json must point func start's Durable extension at it (the repository's host.json names Azure Storage)",
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

  checkProductionInstall(pkg);
}

// What stage-package.sh installs in the package: the root's production dependencies (package.json and
// package-lock.json as they are, `npm ci --omit=dev --workspaces=false`), installed here into a scratch folder.
// Everything the lockfile says production needs must be there, and nothing else: no development tool, and
// neither the devhost workspace nor a package only it depends on.
function checkProductionInstall(pkg) {
  check(
    !Object.keys(pkg.dependencies ?? {}).some((name) => name in (pkg.devDependencies ?? {})),
    "no package may be both a dependency and a devDependency of package.json",
  );
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "infra-check-install-"));
  try {
    const install = spawnSync("bash", [path.join(root, "infra/scripts/install-production.sh"), tmp], {
      encoding: "utf8",
    });
    check(install.status === 0, `the production install failed: ${install.stderr.trim()}`);
    if (install.status !== 0) return;
    const lock = readJson(path.join(root, "package-lock.json")).packages;
    const needed = productionClosure(lock);
    const installed = installedPackages(path.join(tmp, "node_modules"));
    const extra = [...installed].filter((location) => !needed.all.has(location));
    check(
      extra.length === 0,
      `the production install holds packages production does not need: ${extra.slice(0, 5)}`,
    );
    const missing = [...needed.required].filter((location) => !installed.has(location));
    check(
      missing.length === 0,
      `the production install misses packages production needs: ${missing.slice(0, 5)}`,
    );
    // Named for a clearer message: a development tool or the devhost's emulator that production does not need
    // (some, like @types/node, are also dependencies of production packages, and stay).
    const devOnly = [
      ...Object.keys(pkg.devDependencies ?? {}),
      "vitest",
      "typescript",
      "eslint",
      "@vercel/cosmosdb-server",
    ].filter((name) => !needed.all.has(`node_modules/${name}`));
    const leaked = devOnly.filter((name) => installed.has(`node_modules/${name}`));
    check(leaked.length === 0, `the production install holds development packages: ${leaked}`);
    check(installed.size > 0, "the production install holds no packages");
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// The lockfile locations production needs, starting from the root's dependencies and following each package's
// dependencies the way Node looks them up: in the package's own node_modules, then in each enclosing
// node_modules up to the root. `required` leaves out optional dependencies, which npm may skip on this platform.
function productionClosure(packages) {
  const all = new Set();
  const required = new Set();
  const resolve = (from, name) => {
    for (let dir = from; ;) {
      const location = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (location in packages) return location;
      if (!dir) return undefined;
      const cut = dir.lastIndexOf("/node_modules/");
      dir = cut < 0 ? "" : dir.slice(0, cut);
    }
  };
  const visit = (location, optional) => {
    const seen = all.has(location);
    all.add(location);
    if (!optional) required.add(location);
    if (seen && (optional || required.has(location))) return;
    const entry = packages[location];
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const deps = [
      ...Object.keys(entry.dependencies ?? {}).map((name) => [name, optional]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((name) => [name, true]),
      ...Object.keys(entry.peerDependencies ?? {})
        .filter((name) => !optionalPeers[name]?.optional)
        .map((name) => [name, optional]),
    ];
    for (const [name, isOptional] of deps) {
      const found = resolve(location, name);
      if (found) visit(found, isOptional);
    }
  };
  const rootEntry = packages[""];
  for (const name of Object.keys(rootEntry.dependencies ?? {})) {
    const found = resolve("", name);
    if (found) visit(found, false);
  }
  return { all, required };
}

// Every installed package folder, named as the lockfile names its location (node_modules/a/node_modules/@s/b).
function installedPackages(nodeModules, prefix = "node_modules") {
  const found = new Set();
  if (!fs.existsSync(nodeModules)) return found;
  for (const entry of fs.readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const names = entry.name.startsWith("@")
      ? fs.readdirSync(path.join(nodeModules, entry.name)).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    for (const name of names) {
      const dir = path.join(nodeModules, name);
      found.add(`${prefix}/${name}`);
      for (const nested of installedPackages(
        path.join(dir, "node_modules"),
        `${prefix}/${name}/node_modules`,
      ))
        found.add(nested);
    }
  }
  return found;
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
  const guarded = ["agent-replies", ...requestQueues];
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

const STORAGE_HOST_ROLES = {
  "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
  "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
  "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor",
};
const DURABLE_TASK_DATA_CONTRIBUTOR = "0ad04412-c4d5-4796-b79c-f76d14c8d402";

// The host writes diagnostic events to tables and is given the queue and table endpoints with either durable
// backend, so the app's identity needs all three storage roles in both modes.
function checkStorageRoles(snapshot, label) {
  const granted = new Set(
    predicted(snapshot, "Microsoft.Authorization/roleAssignments")
      .filter((a) => isAppIdentity(a.properties.principalId))
      .filter((a) => /\/Microsoft\.Storage\/storageAccounts\/[^/]+$/.test(assignmentScope(a.id)))
      .map((a) => a.properties.roleDefinitionId.split("/").pop()),
  );
  for (const [id, role] of Object.entries(STORAGE_HOST_ROLES)) {
    check(granted.has(id), `${label}: the app's identity must have ${role} on the storage account`);
  }
}

// The names of the functions the app registers (src/functions), from their registration calls: app.<trigger>("name"),
// and an agent per declared service where agents.ts registers them by agentFunctionName (test/unit/functions/agents.test.ts
// checks that it registers exactly those).
function registeredFunctionNames() {
  const names = new Set();
  const dir = path.join(root, "src/functions");
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    for (const m of text.matchAll(/\bapp\.\w+\(\s*"([A-Za-z][\w-]*)"/g)) names.add(m[1]);
    if (text.includes("agentFunctionName(")) {
      for (const s of processServices) names.add(s.agentFunction);
    }
  }
  return names;
}

// The function groups a step waits on keep warm instances (docs/deployment.md, "Always-ready instances"), and
// every per-function entry names a function the app really registers: a misspelt one would silently do nothing.
function checkAlwaysReady(snapshot, label) {
  const site = predicted(snapshot, "Microsoft.Web/sites")[0];
  const alwaysReady = site?.properties?.functionAppConfig?.scaleAndConcurrency?.alwaysReady ?? [];
  const names = alwaysReady.map((a) => a.name);
  const registered = registeredFunctionNames();
  for (const name of names.filter((n) => n.startsWith("function:"))) {
    check(
      registered.has(name.slice("function:".length)),
      `${label}: alwaysReady names ${name}, but src/functions registers no such function (${[...registered].join(", ")})`,
    );
  }
  for (const needed of [
    "durable",
    ...processServices.map((s) => `function:${s.agentFunction}`),
    "function:agentReplies",
  ]) {
    check(
      names.includes(needed),
      `${label}: alwaysReady must keep ${needed} warm (found ${names.join(", ") || "none"})`,
    );
  }
  check(
    alwaysReady.every((a) => Number.isInteger(a.instanceCount) && a.instanceCount >= 1),
    `${label}: every alwaysReady entry needs at least one instance`,
  );
}

/** A TimeSpan such as 00:00:02 in seconds. */
const timeSpanSeconds = (span) => {
  const [h, m, sec] = String(span).split(":").map(Number);
  return h * 3600 + m * 60 + sec;
};

// The durable backend is chosen in the deployed host.json, which the scale controller reads, never by an
// AzureFunctionsJobHost__ override it cannot see (docs/deployment.md, "Durable backend").
function checkDurableBackend(snapshot, label) {
  const settings = appSettingsOf(snapshot);
  const overrides = Object.keys(settings).filter((k) =>
    /^AzureFunctionsJobHost__extensions__durableTask/i.test(k),
  );
  check(
    overrides.length === 0,
    `${label}: the durable backend must be set in the deployed host.json, not by ${overrides.join(", ")}`,
  );
  const scheduler = label.includes("scheduler");
  const host = deployedHostJson(scheduler ? "DurableTaskScheduler" : "AzureStorage");
  const provider = host.extensions.durableTask.storageProvider ?? {};
  if (scheduler) {
    check(
      provider.type === "azureManaged" && provider.connectionStringName === SCHEDULER_CONNECTION_SETTING,
      `${label}: the deployed host.json must name the azureManaged provider and ${SCHEDULER_CONNECTION_SETTING}`,
    );
    check(
      // Unresolved references in the snapshot: format('Endpoint={0};Authentication=ManagedIdentity;ClientID={1}', ...)
      /Endpoint=.+;Authentication=ManagedIdentity;ClientID=/.test(
        String(settings[SCHEDULER_CONNECTION_SETTING] ?? ""),
      ),
      `${label}: ${SCHEDULER_CONNECTION_SETTING} must be set, identity-based`,
    );
    const grants = predicted(snapshot, "Microsoft.Authorization/roleAssignments").filter(
      (a) =>
        isAppIdentity(a.properties.principalId) &&
        a.properties.roleDefinitionId.endsWith(DURABLE_TASK_DATA_CONTRIBUTOR),
    );
    check(grants.length >= 1, `${label}: the app's identity must be Durable Task Data Contributor`);
    // azureManaged arrived in extension bundle 4.30; the scheduler's quickstart asks for 4.32 or later.
    const lower = /^\[(\d+)\.(\d+)/.exec(host.extensionBundle?.version ?? "");
    check(
      lower && (Number(lower[1]) > 4 || (Number(lower[1]) === 4 && Number(lower[2]) >= 32)),
      `${label}: host.json's extension bundle range must start at 4.32.0 or later (${host.extensionBundle?.version})`,
    );
  } else {
    check(
      provider.type === undefined || provider.type === "AzureStorage",
      `${label}: the AzureStorage package's host.json must not name another provider (${provider.type})`,
    );
    check(
      provider.maxQueuePollingInterval !== undefined &&
        timeSpanSeconds(provider.maxQueuePollingInterval) <= 5,
      `${label}: host.json must set durableTask.storageProvider.maxQueuePollingInterval to a few seconds (default 30 s per hop)`,
    );
    check(
      settings[SCHEDULER_CONNECTION_SETTING] === undefined,
      `${label}: no scheduler connection without the scheduler backend`,
    );
  }
  const stage = fs.readFileSync(path.join(root, "infra/scripts/stage-package.sh"), "utf8");
  check(
    /node infra\/scripts\/deployed-host-json\.mjs "\$durable_backend"/.test(stage) &&
      /DURABLE_BACKEND/.test(stage),
    "stage-package.sh must write the deployed host.json with deployed-host-json.mjs from DURABLE_BACKEND",
  );
}

// Chaos in staging is off unless its parameters turn it on, in every deployment that does not ask for it; when
// asked, the parameters reach the app settings, and appSettingOverrides cannot change them (docs/chaos.md).
function checkChaos(snapshot, label) {
  const settings = appSettingsOf(snapshot);
  const chaos = Object.fromEntries(
    [
      "AZURE_FUNCTIONS_ENVIRONMENT",
      "CHAOS_ENABLED",
      "CHAOS_SERVICES",
      "CHAOS_LATENCY_RATE",
      "CHAOS_FAULT_RATE",
    ].map((name) => [name, settings[name]]),
  );
  const expected = label.includes("chaos")
    ? {
        AZURE_FUNCTIONS_ENVIRONMENT: "Staging",
        CHAOS_ENABLED: "true",
        CHAOS_SERVICES: "payment",
        CHAOS_LATENCY_RATE: "0",
        CHAOS_FAULT_RATE: "0.05",
      }
    : {
        AZURE_FUNCTIONS_ENVIRONMENT: "Production",
        CHAOS_ENABLED: "false",
        CHAOS_SERVICES: "*",
        CHAOS_LATENCY_RATE: "0",
        CHAOS_FAULT_RATE: "0",
      };
  check(
    JSON.stringify(chaos) === JSON.stringify(expected),
    `${label}: the chaos settings must be ${JSON.stringify(expected)}, got ${JSON.stringify(chaos)}`,
  );
}

// Each service's <SERVICE>_URL is set: from serviceUrls where the parameters give it, else the placeholder on .invalid.
function checkServiceUrls(snapshot, label, given) {
  const settings = appSettingsOf(snapshot);
  for (const s of processServices) {
    const expected = given[s.name] ?? s.placeholderUrl;
    check(
      settings[s.urlSetting] === expected,
      `${label}: ${s.urlSetting} must be ${expected}, got ${settings[s.urlSetting]}`,
    );
  }
}

function checkSnapshots(files) {
  for (const file of files) {
    const snapshot = readJson(file);
    const label = path.basename(file, ".snapshot.json");
    const params = fs.readFileSync(file.replace(/\.snapshot\.json$/, ".bicepparam"), "utf8");
    const clientId = /operatorAppClientId = '([^']*)'/.exec(params)?.[1];
    // check.sh gives serviceUrls as { <service>: '<url>' } in one parameter set.
    const serviceUrls = Object.fromEntries(
      [...params.matchAll(/serviceUrls = \{ (\w+): '([^']*)' \}/g)].map((m) => [m[1], m[2]]),
    );
    checkSendRights(snapshot, label);
    checkOperatorSignIn(snapshot, label, clientId);
    checkStorageRoles(snapshot, label);
    checkAlwaysReady(snapshot, label);
    checkDurableBackend(snapshot, label);
    checkChaos(snapshot, label);
    checkServiceUrls(snapshot, label, serviceUrls);
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
checkContainerConfig(template);
checkAppSettingsAndSecrets(templateText);
checkLocalSettingsScript(template);
checkDeploymentPackage();
checkSnapshots(process.argv.slice(3));

for (const failure of failures) console.error(`contracts: FAIL ${failure}`);
console.log(`contracts: ${passed + failures.length} checks, ${failures.length} failing`);
process.exit(failures.length === 0 ? 0 : 1);
