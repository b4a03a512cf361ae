/**
 * The infrastructure as the real Bicep CLI compiles and evaluates it, for the tests in test/infra: infra/main.bicep
 * compiled to its ARM template, and `bicep snapshot` of four deployments (what Azure would be asked to create,
 * evaluated offline). Built once per run of these sources and shared by every test file through a cache directory:
 * each file runs in its own worker, and the CLI takes seconds per command.
 *
 * The CLI is the one `npm run infra:check` restores from NuGet (infra/scripts/check.sh): the same version, found in
 * the same cache directory (BICEP_CACHE_DIR, else $XDG_CACHE_HOME/bicep, else ~/.cache/bicep), or BICEP_BIN. The
 * tests never restore it themselves, which needs the .NET SDK and the network: where it is missing, their files
 * skip, saying so (`describeWithBicep`).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe } from "vitest";
import { repositoryRoot } from "../../tools/repository";
import { HOST_BODY_LIMIT_SETTING, SETTINGS_BY_ORIGIN, SETTING_NAMES } from "../../src/config";

export const ROOT = repositoryRoot(__dirname);

export function readJson<T = unknown>(relative: string): T {
  return JSON.parse(fs.readFileSync(path.join(ROOT, relative), "utf8")) as T;
}

export function readText(relative: string): string {
  return fs.readFileSync(path.join(ROOT, relative), "utf8");
}

/** A remote service as infra/process.json gives it to Bicep (a unit test keeps it in step with src/domain/process.ts). */
export interface ProcessService {
  name: string;
  requestQueue: string;
  agentFunction: string;
}

export const processServices = readJson<{ services: ProcessService[] }>("infra/process.json").services;
export const requestQueues = processServices.map((s) => s.requestQueue);

/**
 * The settings every deployment must give the app (docs/configuration.md): the host's and the connections', which
 * the platform reads, and every setting of the app's table but the local tools' own, taken from the table so that
 * a setting added there and left out of infra/ fails here.
 */
export const REQUIRED_APP_SETTINGS = [
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
  HOST_BODY_LIMIT_SETTING,
  "DURABLE_TASK_SCHEDULER_CONNECTION_STRING",
  ...SETTING_NAMES.filter((name) => !SETTINGS_BY_ORIGIN.local.includes(name)),
];

// ---- The Bicep CLI ----

/** The version check.sh pins: read from it, so that a bump there is a bump here. */
export const BICEP_VERSION = (() => {
  const version = /^bicep_version="([^"]+)"$/m.exec(readText("infra/scripts/check.sh"))?.[1];
  if (!version) throw new Error('infra/scripts/check.sh has no bicep_version="..." line');
  return version;
})();

/** Where check.sh restores the CLI: its NuGet package's folder in the cache, as `dotnet restore --packages` lays it out. */
function cachedBicepPath(): string | undefined {
  const platform = { linux: "linux", darwin: "osx" }[process.platform as string];
  const arch = { x64: "x64", arm64: "arm64" }[process.arch as string];
  if (!platform || !arch) return undefined;
  const cacheDir =
    process.env.BICEP_CACHE_DIR ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? "/tmp", ".cache"), "bicep");
  const packageId = `azure.bicep.commandline.${platform}-${arch}`;
  return path.join(cacheDir, "packages", packageId, BICEP_VERSION, "tools", "bicep");
}

export interface BicepCli {
  /** The executable, when it runs and is the pinned version. */
  path?: string;
  /** Why there is none: what is missing and how to get it. */
  missing?: string;
}

function findBicep(): BicepCli {
  const candidate = process.env.BICEP_BIN || cachedBicepPath();
  const howToGet = `\`npm run infra:check\` restores it from NuGet (needs the .NET SDK), or set BICEP_BIN`;
  if (!candidate || !fs.existsSync(candidate)) {
    return {
      missing: `no Bicep CLI ${BICEP_VERSION} (looked for ${candidate ?? "a package for this platform"}); ${howToGet}`,
    };
  }
  const run = spawnSync(candidate, ["--version"], { encoding: "utf8", timeout: 60_000 });
  if (!run.stdout?.includes(`version ${BICEP_VERSION} `)) {
    const found = (run.stdout || run.stderr || String(run.error ?? "")).trim().split("\n")[0];
    return { missing: `${candidate} is not Bicep CLI ${BICEP_VERSION} (${found}); ${howToGet}` };
  }
  return { path: candidate };
}

let lookedUp: BicepCli | undefined;
/** Looked up on first use: a test file that needs no Bicep does not pay for starting the CLI. */
export function bicepCli(): BicepCli {
  lookedUp ??= findBicep();
  return lookedUp;
}

/**
 * `describe`, skipped where the Bicep CLI is missing: the reason goes in the title and in one warning line, as the
 * .NET and browser suites do, since `npm test` must pass with Node.js alone.
 */
export function describeWithBicep(title: string, body: () => void): void {
  const bicep = bicepCli();
  if (bicep.missing) console.warn(`${title}: skipped, ${bicep.missing}`);
  describe.skipIf(bicep.missing !== undefined)(
    bicep.missing ? `${title} (skipped: ${bicep.missing})` : title,
    body,
  );
}

// ---- The compiled template and the deployments ----

/**
 * The parameter sets evaluated with `bicep snapshot`: operators signing in (and a developer with data access), no
 * sign-in set up, the other capacity choices (the Durable Task Scheduler backend and serverless Cosmos DB) with one
 * service's URL set and a rotation of the paging key under way, and a staging environment with chaos on, whose
 * appSettingOverrides try to change the chaos settings.
 */
const firstService = processServices[0]!.name;
const firstServiceUrl = `https://${firstService}.contoso.example`;
const servicesUrl = "https://services.contoso.example";
/** A Key Vault secret version: 32 hex digits. */
const previousKeyVersion = "0123456789abcdef0123456789abcdef";

export interface Deployment {
  /** The operators' app registration, when sign-in is set up. */
  operatorAppClientId?: string;
  /** The Durable Task Scheduler backend, rather than Azure Storage. */
  scheduler: boolean;
  /** Serverless Cosmos DB, rather than the default autoscale throughput. */
  serverless?: boolean;
  /** A staging environment with chaos on. */
  chaos: boolean;
  /** The remoteServicesUrl and serviceUrlList parameters, when set. */
  serviceUrls: { remoteServicesUrl?: string; serviceUrlList?: string };
  /** The pagingTokenPreviousKeyVersion parameter, when a rotation is under way. */
  previousKeyVersion?: string;

  /** Its lines of the .bicepparam file, beside the parameters every deployment needs. */
  params: string[];
}

export type DeploymentName = "with-sign-in" | "without-sign-in" | "with-scheduler" | "with-chaos";

export const DEPLOYMENTS: Record<DeploymentName, Deployment> = {
  "with-sign-in": {
    operatorAppClientId: "22222222-2222-2222-2222-222222222222",
    scheduler: false,
    chaos: false,
    serviceUrls: {},
    params: ["param operatorAppClientId = '22222222-2222-2222-2222-222222222222'"],
  },
  "without-sign-in": { scheduler: false, chaos: false, serviceUrls: {}, params: [] },
  // Where the services are set: the base URL, and one service elsewhere.
  "with-scheduler": {
    scheduler: true,
    serverless: true,
    chaos: false,
    serviceUrls: { remoteServicesUrl: servicesUrl, serviceUrlList: `${firstService}=${firstServiceUrl}` },
    previousKeyVersion,
    params: [
      "param durableBackend = 'DurableTaskScheduler'",
      "param cosmosCapacityMode = 'Serverless'",
      `param remoteServicesUrl = '${servicesUrl}'`,
      `param serviceUrlList = '${firstService}=${firstServiceUrl}'`,
      `param pagingTokenPreviousKeyVersion = '${previousKeyVersion}'`,
    ],
  },
  "with-chaos": {
    scheduler: false,
    chaos: true,
    serviceUrls: {},
    params: [
      "param functionsEnvironment = 'Staging'",
      "param chaosEnabled = true",
      "param chaosServices = 'payment'",
      "param chaosFaultRate = '0.05'",
      "param appSettingOverrides = { CHAOS_FAULT_RATE: '1', CHAOS_LATENCY_RATE: '1', MAX_REQUEST_BYTES: '32768' }",
    ],
  },
};
export const DEPLOYMENT_NAMES = Object.keys(DEPLOYMENTS) as DeploymentName[];

export interface ArmTemplate {
  parameters: Record<string, { type: string; defaultValue?: unknown }>;
  outputs: Record<string, unknown>;
}

/** A resource of a snapshot; references to other resources stay unresolved, as ARM expressions in strings. */
export interface PredictedResource {
  type: string;
  name: string;
  id: string;
  // The shapes differ per resource type; each test names the fields it reads.
  properties?: Record<string, unknown>;
}

export interface Snapshot {
  predictedResources: PredictedResource[];
}

export interface CompiledInfra {
  /** infra/main.bicep compiled, as text: searched for names and functions wherever they appear. */
  templateText: string;
  template: ArmTemplate;
  snapshots: Record<DeploymentName, Snapshot>;
}

const SNAPSHOT_ARGS = [
  "--mode",
  "overwrite",
  "--location",
  "swedencentral",
  "--subscription-id",
  "00000000-0000-0000-0000-000000000001",
  "--tenant-id",
  "00000000-0000-0000-0000-000000000002",
];

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? filesUnder(full) : [full];
    })
    .sort();
}

/** The cache key: everything under infra/ (the Bicep, and the JSON it loads), the CLI, and this file's parameters. */
function inputsHash(cli: string): string {
  const hash = createHash("sha1").update(BICEP_VERSION).update(cli).update(fs.readFileSync(__filename));
  for (const file of filesUnder(path.join(ROOT, "infra"))) {
    hash.update(path.relative(ROOT, file)).update(fs.readFileSync(file));
  }
  return hash.digest("hex").slice(0, 12);
}

function run(cli: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`bicep ${args.join(" ")} exited with ${code}:\n${output}`)),
    );
  });
}

async function build(cli: string, dir: string): Promise<void> {
  const main = path.join(ROOT, "infra", "main.bicep");
  const jobs = [run(cli, ["build", main, "--outfile", path.join(dir, "main.json")], dir)];
  for (const [name, deployment] of Object.entries(DEPLOYMENTS)) {
    const file = path.join(dir, `${name}.bicepparam`);
    // `using` takes a path relative to the parameters file.
    fs.writeFileSync(
      file,
      [
        `using '${path.relative(dir, main).split(path.sep).join("/")}'`,
        "param environmentName = 'check'",
        "param location = 'swedencentral'",
        "param principalId = '11111111-1111-1111-1111-111111111111'",
        ...deployment.params,
        "",
      ].join("\n"),
    );
    jobs.push(run(cli, ["snapshot", file, ...SNAPSHOT_ARGS], dir));
  }
  await Promise.all(jobs);
}

function load(dir: string): CompiledInfra {
  const templateText = fs.readFileSync(path.join(dir, "main.json"), "utf8");
  const snapshots = Object.fromEntries(
    DEPLOYMENT_NAMES.map((name) => [
      name,
      JSON.parse(fs.readFileSync(path.join(dir, `${name}.snapshot.json`), "utf8")) as Snapshot,
    ]),
  ) as Record<DeploymentName, Snapshot>;
  return { templateText, template: JSON.parse(templateText) as ArmTemplate, snapshots };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let compiled: Promise<CompiledInfra> | undefined;

/** For the hooks that wait on `compiledInfra`: five CLI runs take seconds alone, much longer beside a busy suite. */
export const COMPILE_TIMEOUT_MS = 180_000;

/**
 * The compiled template and the snapshots of the current infra/ sources. The first worker to ask builds them in a
 * directory of its own (mkdtemp), then renames it into place: a reader never sees half a build. The others wait
 * on a lock meanwhile rather than run the CLI alongside, which on two cores would only slow both.
 */
export function compiledInfra(): Promise<CompiledInfra> {
  compiled ??= (async () => {
    const { path: cli, missing } = bicepCli();
    if (!cli) throw new Error(missing);
    const target = path.join(os.tmpdir(), `sas-infra-${inputsHash(cli)}`);
    const lock = `${target}.lock`;
    const deadline = Date.now() + 300_000;
    while (!fs.existsSync(target)) {
      try {
        fs.mkdirSync(lock);
      } catch {
        // A lock left by a run that was killed would block every later one: after two minutes it is taken over.
        const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true });
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
        await sleep(200);
        continue;
      }
      try {
        if (fs.existsSync(target)) break;
        const staging = await fs.promises.mkdtemp(`${target}.build-`);
        try {
          await build(cli, staging);
          fs.renameSync(staging, target);
        } catch (error) {
          fs.rmSync(staging, { recursive: true, force: true });
          // A run that took over a lock it thought stale may have finished first: its build is the same.
          if (!fs.existsSync(target)) throw error;
        }
      } finally {
        fs.rmSync(lock, { recursive: true, force: true });
      }
    }
    // Builds of older sources, left by earlier runs, are removed after a day.
    for (const entry of fs.readdirSync(os.tmpdir()).filter((e) => /^sas-infra-[0-9a-f]{12}$/.test(e))) {
      const full = path.join(os.tmpdir(), entry);
      if (full !== target && Date.now() - fs.statSync(full).mtimeMs > 86_400_000)
        fs.rmSync(full, { recursive: true, force: true });
    }
    return load(target);
  })();
  return compiled;
}

// ---- Reading snapshots ----

export function predicted(snapshot: Snapshot, type: string): PredictedResource[] {
  return snapshot.predictedResources.filter((r) => r.type === type);
}

export interface RoleAssignment {
  scope: string;
  roleId: string;
  principalId: string;
}

/**
 * The role assignments of a snapshot. The scope is the first argument of extensionResourceId(...), or the part
 * of a literal id before /providers/Microsoft.Authorization/roleAssignments.
 */
export function roleAssignments(snapshot: Snapshot): RoleAssignment[] {
  return predicted(snapshot, "Microsoft.Authorization/roleAssignments").map((r) => {
    const properties = r.properties as { roleDefinitionId: string; principalId: string };
    const call = /^\[extensionResourceId\('([^']+)'/.exec(r.id);
    return {
      scope: call ? call[1]! : r.id.split("/providers/Microsoft.Authorization/roleAssignments/")[0]!,
      roleId: properties.roleDefinitionId.split("/").pop()!,
      principalId: properties.principalId,
    };
  });
}

/**
 * Role assignments in a snapshot name their principal as a literal id (a parameter) or as a reference to a
 * resource created in the same deployment: the app's user-assigned identity is the latter.
 */
export const isAppIdentity = (principalId: string): boolean =>
  /^\[reference\('[^']*\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/id-/.test(principalId);

/** The app settings a snapshot gives the function app. */
export function appSettingsOf(snapshot: Snapshot): Record<string, unknown> {
  return (
    predicted(snapshot, "Microsoft.Web/sites/config").find((r) => r.name.endsWith("/appsettings"))
      ?.properties ?? {}
  );
}

// ---- infra/scripts/deployed-host-json.mjs, which stage-package.sh runs ----

export interface HostJson {
  extensionBundle?: { version?: string };
  extensions: {
    durableTask: {
      storageProvider?: { type?: string; connectionStringName?: string; maxQueuePollingInterval?: string };
    };
  };
}

interface DeployedHostJsonModule {
  deployedHostJson(backend: string): HostJson;
  SCHEDULER_CONNECTION_SETTING: string;
}

/** The module itself, not a copy of its rules: the test holds what the deployment really ships. */
export async function deployedHostJsonModule(): Promise<DeployedHostJsonModule> {
  const file = pathToFileURL(path.join(ROOT, "infra/scripts/deployed-host-json.mjs")).href;
  return (await import(file)) as DeployedHostJsonModule;
}
