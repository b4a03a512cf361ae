import { z } from "zod";
import {
  parseAzureMonitor,
  parseCosmos,
  parseServiceBus,
  type AzureMonitorConnection,
  type CosmosConnectionConfig,
  type Env,
  type ServiceBusConnectionConfig,
} from "./app/connectionStrings";
import type { ChaosSettings } from "./domain/chaos";
import { isAllowedReplyTo } from "./domain/messages";
import { computeRetryBudget } from "./domain/retryBudget";
import { serviceUrlSetting } from "./domain/services";
import { AGENT_NAMES, type AgentName } from "./domain/workflow";

/**
 * Every app setting (docs/configuration.md), read once at start-up. A bad value stops the app with a message naming the
 * setting, the value and what was expected: a typo in a schedule or a timeout must never start a half-working
 * Scheduler. Defaults suit the local stack; Azure sets every one explicitly (infra/).
 */

const positiveInt = (what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { error: `expected a positive whole number (${what})` })
    .transform(Number)
    .refine((n) => n > 0, { error: `expected a positive whole number (${what})` });

/** A decimal number such as 5, 0.5 or .05 (no sign, no exponent). */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** A share of attempts, from 0 (none) to 1 (every one). */
const share = z
  .string()
  .trim()
  .regex(DECIMAL, { error: "expected a share of attempts from 0 to 1, such as 0.05" })
  .transform(Number)
  .refine((n) => n <= 1, { error: "expected a share of attempts from 0 to 1, such as 0.05" });

/** Longest injected latency: a JavaScript timer cannot wait much longer than 24 days, and no step waits an hour. */
const MAX_CHAOS_LATENCY_SECONDS = 3600;

const url = z.url({ error: "expected an absolute http(s) URL" }).refine((u) => /^https?:\/\//.test(u), {
  error: "expected an absolute http(s) URL",
});

/** Six-field NCRONTAB (second minute hour day month day-of-week), as the Functions timer trigger requires. */
const ncrontab = z
  .string()
  .trim()
  .refine((s) => s.split(/\s+/).length === 6 && s.split(/\s+/).every((f) => /^[\d*/,\-A-Za-z?]+$/.test(f)), {
    error: 'expected a six-field NCRONTAB expression such as "*/15 * * * * *"',
  });

const isAgentName = (name: string): name is AgentName => AGENT_NAMES.some((agent) => agent === name);

/** A service's base URL under REMOTE_SERVICES_URL: the local simulator serves each service at /<service>. */
export const serviceUrlUnder = (remoteServicesUrl: string, service: string): string =>
  `${remoteServicesUrl.replace(/\/+$/, "")}/${service}`;

/** A pair for the messages, of a service the process declares (the first), whatever the process. */
const EXAMPLE_PAIR = `${AGENT_NAMES[0]}=https://${AGENT_NAMES[0]}.example`;

/** SERVICE_URLS' `service=url` pairs, each checked: a declared service, named once, with an http(s) URL. */
function parseServiceUrlList(list: string, ctx: z.RefinementCtx): Partial<Record<AgentName, string>> {
  const urls: Partial<Record<AgentName, string>> = {};
  const problem = (message: string) => ctx.addIssue({ code: "custom", message });
  for (const entry of list.split(",").map((e) => e.trim())) {
    if (entry === "") continue;
    const at = entry.indexOf("=");
    if (at < 0) {
      problem(`expected service=url pairs such as ${EXAMPLE_PAIR}, got ${JSON.stringify(entry)}`);
      continue;
    }
    const service = entry.slice(0, at).trim();
    const value = entry.slice(at + 1).trim();
    if (!isAgentName(service)) {
      problem(`${JSON.stringify(service)} is not a service of the process (${AGENT_NAMES.join(", ")})`);
    } else if (urls[service] !== undefined) {
      problem(`${service} is named twice`);
    } else if (!url.safeParse(value).success) {
      problem(`${service}: expected an absolute http(s) URL, got ${JSON.stringify(value)}`);
    } else {
      urls[service] = value.replace(/\/+$/, "");
    }
  }
  return urls;
}

/** Bound on STATUS_QUEUES: the app keeps one open sender per status queue. */
export const MAX_STATUS_QUEUES = 50;

/**
 * The shortest key continuation tokens may be signed with: the 32 bytes of an HMAC-SHA256, below which RFC 2104
 * strongly discourages a key. infra/main.bicep lengthens a shorter value it is given (its minPagingKeyLength).
 */
export const MIN_PAGING_KEY_LENGTH = 32;

/**
 * How a key meant for local runs only begins, as local.settings.sample.json's does: the app refuses such a key in
 * Azure, where anyone could read it in this repository and sign tokens.
 */
export const LOCAL_PAGING_KEY_PREFIX = "local-only:";

/** What App Service leaves in a setting whose Key Vault reference it could not resolve. */
const KEY_VAULT_REFERENCE = "@Microsoft.KeyVault(";

const PAGING_KEY_ADVICE = `at least ${MIN_PAGING_KEY_LENGTH} characters, such as the output of \`openssl rand -base64 48\``;

/** Why `key` cannot sign continuation tokens, or undefined when it can. */
function pagingKeyProblem(key: string): string | undefined {
  if (key.startsWith(KEY_VAULT_REFERENCE)) {
    return (
      "a Key Vault reference the platform did not resolve: the app's identity needs Key Vault Secrets User on the " +
      "secret, and the site's keyVaultReferenceIdentity must name that identity (infra/modules/keyVault.bicep)"
    );
  }
  if (key.length < MIN_PAGING_KEY_LENGTH)
    return `expected ${PAGING_KEY_ADVICE}, got ${key.length} characters`;
  return undefined;
}

/** PAGING_TOKEN_KEY: required, since a key made up per process would not read another instance's tokens. */
const pagingKey = z
  .string()
  .trim()
  .transform((key, ctx) => {
    const problem =
      key === ""
        ? `required: the key continuation tokens are signed with, the same on every instance: ${PAGING_KEY_ADVICE} ` +
          "(in Azure, a Key Vault reference infra/ writes)"
        : pagingKeyProblem(key);
    if (problem === undefined) return key;
    ctx.addIssue({ code: "custom", message: problem });
    return z.NEVER;
  });

/** PAGING_TOKEN_PREVIOUS_KEY: empty for none. */
const previousPagingKey = z
  .string()
  .trim()
  .transform((key, ctx): string | null => {
    if (key === "") return null;
    const problem = pagingKeyProblem(key);
    if (problem === undefined) return key;
    ctx.addIssue({ code: "custom", message: problem });
    return z.NEVER;
  });

/**
 * One setting: its name, the schema of its string value, and the value read when it is unset or blank. A secret's
 * value is never quoted in a problem, which goes to the log.
 */
export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly schema: S;
  readonly default: string;
  readonly secret?: true;
  /**
   * Where a deployed app's value comes from. `shipped` (when absent): infra/app-settings.json, written from this
   * table by `npm run docs:update` and read by infra/main.bicep, with `azure` as the value when Azure wants another
   * than `default`; so a setting added here reaches Azure without a hand-kept list. `infrastructure`: main.bicep
   * sets it from what it deploys (a database name, a queue's MaxDeliveryCount, a Key Vault reference), and a test
   * of test/infra checks it does. `local`: a local tool's, never set in Azure.
   */
  readonly inAzure?: "shipped" | "infrastructure" | "local";
  /** The value Azure ships, where it is not `default` (only for `shipped` settings). */
  readonly azure?: string;
}

type SettingTable = { readonly [key: string]: Setting };

/** What a table of settings parses to: each key's value, typed by its schema's output. */
type Parsed<T extends SettingTable> = { -readonly [K in keyof T]: z.output<T[K]["schema"]> };

/**
 * The settings, keyed by the AppConfig field each fills (or, for the chaos and tracing settings, the part of the
 * field deriveConfig makes of them), so that the field's type is its schema's output and nothing restates it. The
 * names are contract (docs/contract.md#settings); test/unit/config.test.ts checks that no two entries share one.
 */
const SETTING_TABLE = {
  cosmosDatabase: {
    name: "COSMOS_DATABASE",
    inAzure: "infrastructure",
    schema: z.string().trim().min(1, { error: "expected a database name" }),
    default: "sas",
  },
  taskHubName: {
    name: "TASK_HUB_NAME",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .regex(/^[A-Za-z][A-Za-z0-9]{2,44}$/, {
        error: "expected 3-45 letters and digits, starting with a letter",
      }),
    default: "sas",
  },
  starterSchedule: { name: "STARTER_SCHEDULE", schema: ncrontab, default: "*/5 * * * * *" },
  supervisorSchedule: { name: "SUPERVISOR_SCHEDULE", schema: ncrontab, default: "*/15 * * * * *" },
  /**
   * 60 in Azure, from the latency budget of one step there (docs/deployment.md, "Latency budget"): a step's hops
   * take up to 24 s when every function group is warm, and up to 30 s more when a group has to scale out; the
   * local default assumes instant hops.
   */
  stepTimeoutSeconds: {
    name: "STEP_TIMEOUT_SECONDS",
    schema: positiveInt("seconds"),
    default: "30",
    azure: "60",
  },
  claimTimeoutSeconds: { name: "CLAIM_TIMEOUT_SECONDS", schema: positiveInt("seconds"), default: "60" },
  supervisorMaxFailures: {
    name: "SUPERVISOR_MAX_FAILURES",
    schema: positiveInt("failed attempts retried before Error"),
    default: "3",
  },
  supervisorBackoffSeconds: {
    name: "SUPERVISOR_BACKOFF_SECONDS",
    schema: positiveInt("seconds"),
    default: "10",
  },
  supervisorPageSize: {
    name: "SUPERVISOR_PAGE_SIZE",
    schema: positiveInt("records per page"),
    default: "100",
  },
  supervisorWindowHours: { name: "SUPERVISOR_WINDOW_HOURS", schema: positiveInt("hours"), default: "24" },
  supervisorLeaseSeconds: { name: "SUPERVISOR_LEASE_SECONDS", schema: positiveInt("seconds"), default: "60" },
  maxInFlight: { name: "MAX_IN_FLIGHT", schema: positiveInt("orders"), default: "50" },
  maxPendingBacklog: { name: "MAX_PENDING_BACKLOG", schema: positiveInt("orders"), default: "1000" },
  retryBudgetPerStep: { name: "RETRY_BUDGET_PER_STEP", schema: positiveInt("calls"), default: "30" },
  agentMaxAttempts: {
    name: "AGENT_MAX_ATTEMPTS",
    schema: positiveInt("calls per delivered request"),
    default: "3",
  },
  agentAttemptTimeoutSeconds: {
    name: "AGENT_ATTEMPT_TIMEOUT_SECONDS",
    schema: positiveInt("seconds"),
    default: "5",
  },
  agentRequestMaxDeliveryCount: {
    name: "AGENT_REQUEST_MAX_DELIVERY_COUNT",
    inAzure: "infrastructure",
    schema: positiveInt("the *-requests queues' MaxDeliveryCount"),
    default: "2",
  },
  /** How long a remote service's shared circuit breaker stays open before one probe call (doubling per failed probe). */
  breakerOpenSeconds: {
    name: "BREAKER_OPEN_SECONDS",
    schema: positiveInt("seconds"),
    default: "10",
    azure: "30",
  },
  /**
   * How long an order may wait parked for an unavailable service before its attempts count as failures again
   * (and it can end in Error, with an alert of its own).
   */
  outageMaxSeconds: { name: "OUTAGE_MAX_SECONDS", schema: positiveInt("seconds"), default: "3600" },
  /** The front door's limit on a request body; the host's own is derived from it (hostRequestBodyLimit). */
  maxRequestBytes: { name: "MAX_REQUEST_BYTES", schema: positiveInt("bytes"), default: "65536" },
  /**
   * The key continuation tokens are signed with (src/api/continuation.ts). A setting, not made up per process, so
   * that a token one instance gave is read by every other, and after a restart. In Azure a Key Vault reference.
   */
  pagingTokenKey: {
    name: "PAGING_TOKEN_KEY",
    schema: pagingKey,
    default: "",
    secret: true,
    inAzure: "infrastructure",
  },
  /**
   * The key before the last rotation, read but never signed with, so that a rotation breaks no paging in flight.
   */
  pagingTokenPreviousKey: {
    name: "PAGING_TOKEN_PREVIOUS_KEY",
    inAzure: "infrastructure",
    schema: previousPagingKey,
    default: "",
    secret: true,
  },
  statusQueuePrefix: {
    name: "STATUS_QUEUE_PREFIX",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, { error: "expected a queue-name prefix such as status-" }),
    default: "status-",
  },
  /**
   * The status queues that exist, comma-separated: an order's replyTo must name one of them, and the app opens
   * senders for these only. Each must start with STATUS_QUEUE_PREFIX (checked at start-up).
   */
  statusQueues: {
    name: "STATUS_QUEUES",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .transform((v): readonly string[] =>
        v
          .split(",")
          .map((q) => q.trim())
          .filter((q) => q !== ""),
      )
      .refine((names) => names.every((q) => /^[a-z0-9][a-z0-9._-]{0,259}$/.test(q)), {
        error: "expected comma-separated Service Bus queue names such as status-demo,status-shop",
      })
      .refine((names) => names.length <= MAX_STATUS_QUEUES, {
        error: `expected at most ${MAX_STATUS_QUEUES} status queues`,
      }),
    default: "status-demo",
  },
  /**
   * Where operators' identities come from. `platform`: the x-ms-client-principal header of the platform's
   * authentication (Entra ID), believed only while that authentication is on. `header`: the header as the
   * client sends it, for local runtimes with no platform in front (the devhost, func start); refused in Azure.
   */
  operatorAuth: {
    name: "OPERATOR_AUTH",
    inAzure: "infrastructure",
    schema: z.enum(["platform", "header"], { error: "expected platform or header" }),
    default: "platform",
  },
  /**
   * Where the process's remote services live: each declared service at `<this URL>/<service>`, the layout of the
   * local simulator (and of a gateway in front of real services), unless SERVICE_URLS names another URL for it.
   */
  remoteServicesUrl: {
    name: "REMOTE_SERVICES_URL",
    inAzure: "infrastructure",
    // The service's name is appended: http://host/ would otherwise give http://host//<service>.
    schema: url.transform((v) => v.replace(/\/+$/, "")),
    default: "http://127.0.0.1:7081",
  },
  /**
   * The services served elsewhere than under REMOTE_SERVICES_URL, as comma-separated `service=url` pairs (the
   * service's base URL, as `<SERVICE>_URL` gives it). One setting for any number of services, so that a deployment
   * names none of them in its own files.
   */
  serviceUrlList: {
    name: "SERVICE_URLS",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .transform((v, ctx) => parseServiceUrlList(v, ctx)),
    default: "",
  },
  /**
   * The remote services simulator whose /_faults the dashboard's fault panel drives (devhost only). Empty, as in
   * Azure, hides the panel: there is nothing to break on purpose in production.
   */
  dashboardSimulatorUrl: {
    name: "DASHBOARD_SIMULATOR_URL",
    inAzure: "local",
    schema: z
      .string()
      .trim()
      .refine((v) => v === "" || url.safeParse(v).success, {
        error: "expected an absolute http(s) URL, or empty to hide the fault panel",
      })
      // The dashboard appends its own paths: http://host/ would otherwise give http://host//_faults.
      .transform((v) => v.replace(/\/+$/, "")),
    default: "",
  },
  /**
   * Chaos in staging (docs/chaos.md#chaos-in-staging): latency and faults injected into the agents' remote calls.
   * Off unless this separate switch is true: without it every CHAOS_*_RATE must be 0, and with it the app
   * refuses to start in production (AZURE_FUNCTIONS_ENVIRONMENT).
   */
  chaosEnabled: {
    name: "CHAOS_ENABLED",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .refine((v) => v === "true" || v === "false", { error: "expected true or false" })
      .transform((v) => v === "true"),
    default: "false",
  },
  /** The agents whose calls chaos hits: `*` or some of the declared services (src/domain/process.ts). */
  chaosServices: {
    name: "CHAOS_SERVICES",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .transform((v, ctx) => {
        const names: string[] =
          v === "*"
            ? [...AGENT_NAMES]
            : v
                .split(",")
                .map((name) => name.trim())
                .filter((name) => name !== "");
        if (names.length > 0 && names.every(isAgentName)) return names;
        ctx.issues.push({
          code: "custom",
          input: v,
          message: `expected * or comma-separated services among ${AGENT_NAMES.join(", ")}`,
        });
        return z.NEVER;
      }),
    default: "*",
  },
  /** Share of attempts delayed by CHAOS_LATENCY_SECONDS before the call. */
  chaosLatencyRate: { name: "CHAOS_LATENCY_RATE", schema: share, default: "0", inAzure: "infrastructure" },
  chaosLatencySeconds: {
    name: "CHAOS_LATENCY_SECONDS",
    inAzure: "infrastructure",
    schema: z
      .string()
      .trim()
      .regex(DECIMAL, { error: "expected a number of seconds above 0, such as 10 or 0.5" })
      .transform(Number)
      .refine((n) => n > 0 && n <= MAX_CHAOS_LATENCY_SECONDS, {
        error: `expected a number of seconds above 0 and at most ${MAX_CHAOS_LATENCY_SECONDS}`,
      }),
    default: "10",
  },
  /** Share of attempts failed before the call, as a refused connection would fail them. */
  chaosFaultRate: { name: "CHAOS_FAULT_RATE", schema: share, default: "0", inAzure: "infrastructure" },
  /**
   * Where the app's spans go when Application Insights is not configured (docs/operations.md#tracing): nowhere,
   * a bounded buffer in this process that GET /api/orders/{orderId}/trace and the dashboard read, or stdout.
   */
  localTracing: {
    name: "LOCAL_TRACING",
    inAzure: "local",
    schema: z.enum(["off", "memory", "console"], { error: "expected off, memory or console" }),
    default: "off",
  },
  /**
   * Share of orders whose trace goes to Application Insights, decided on the trace id, so that every instance keeps
   * or drops the same whole traces.
   */
  samplingRatio: {
    name: "TRACE_SAMPLING_RATIO",
    schema: z
      .string()
      .trim()
      .regex(DECIMAL, { error: "expected a share of traces from 0 to 1, such as 0.25" })
      .transform(Number)
      .refine((n) => n <= 1, { error: "expected a share of traces from 0 to 1, such as 0.25" }),
    default: "1",
  },
} as const satisfies SettingTable;

/**
 * Each declared service's base URL: its own `<SERVICE>_URL` (such as INVENTORY_URL) when set, else its SERVICE_URLS
 * entry, else REMOTE_SERVICES_URL/<service>. `<SERVICE>_URL` is optional and outside the settings table, since the
 * services come from the process declaration, not from this file. A service given both ways is refused: two
 * places for one fact, and no telling which one the deployment meant.
 */
function serviceUrlsOf(env: Env, problems: string[]): Record<AgentName, string> | undefined {
  // The two settings again, on their own: so that a bad setting elsewhere does not hide a bad URL (each bad one is
  // named once, by loadConfig's parse of the whole table).
  const values = parseTable(SERVICE_LOCATION_SETTINGS, env, []);
  if (!values) return undefined;
  return recordOf(AGENT_NAMES, (service) => {
    const name = serviceUrlSetting(service);
    const own = env[name]?.trim();
    const listed = values.serviceUrlList[service];
    if (!own) return listed ?? serviceUrlUnder(values.remoteServicesUrl, service);
    if (!url.safeParse(own).success) problems.push(`${name}="${own}": expected an absolute http(s) URL`);
    else if (listed !== undefined)
      problems.push(`${name} and ${nameOf("serviceUrlList")} both give ${service}'s URL: keep one of them`);
    return own.replace(/\/+$/, "");
  });
}

/** The settings that say where the remote services are. */
const SERVICE_LOCATION_SETTINGS = {
  remoteServicesUrl: SETTING_TABLE.remoteServicesUrl,
  serviceUrlList: SETTING_TABLE.serviceUrlList,
};

const ALL_SETTINGS = Object.values(SETTING_TABLE);

export type SettingName = (typeof ALL_SETTINGS)[number]["name"];
export const SETTING_NAMES: SettingName[] = ALL_SETTINGS.map((setting) => setting.name);
/**
 * infra/app-settings.json's `shipped` object: every `shipped` setting with the value Azure gets unless
 * appSettingOverrides says otherwise (`npm run docs:update` writes the file, test/unit/appSettingsFile.test.ts; main.bicep reads it).
 */
export function shippedAzureSettings(): Record<string, string> {
  return Object.fromEntries(
    ALL_SETTINGS.flatMap((setting: Setting) =>
      (setting.inAzure ?? "shipped") === "shipped" ? [[setting.name, setting.azure ?? setting.default]] : [],
    ),
  );
}

/** The settings main.bicep sets from what it deploys, and the local tools' own: neither is in app-settings.json. */
export const SETTINGS_BY_ORIGIN = {
  infrastructure: ALL_SETTINGS.filter((s: Setting) => s.inAzure === "infrastructure").map((s) => s.name),
  local: ALL_SETTINGS.filter((s: Setting) => s.inAzure === "local").map((s) => s.name),
};

/** Setting name → its schema and default, for the docs and the tests that quote the defaults. */
export const SETTINGS: Record<SettingName, Setting> = indexByName(ALL_SETTINGS);

/** Every setting, parsed and typed by its schema, before deriveConfig groups and checks them. */
export type SettingValues = Parsed<typeof SETTING_TABLE>;

type ChaosSetting =
  "chaosEnabled" | "chaosServices" | "chaosLatencyRate" | "chaosLatencySeconds" | "chaosFaultRate";
/** The settings deriveConfig folds into chaos and telemetry rather than passing on as fields of their own. */
type GroupedSetting =
  | ChaosSetting
  | "localTracing"
  | "samplingRatio"
  | "remoteServicesUrl"
  | "serviceUrlList"
  | "pagingTokenKey"
  | "pagingTokenPreviousKey";

export interface AppConfig extends Omit<SettingValues, GroupedSetting> {
  serviceBus: ServiceBusConnectionConfig;
  cosmos: CosmosConnectionConfig;
  /** Base URL of each declared service: its `<SERVICE>_URL`, its SERVICE_URLS entry, or REMOTE_SERVICES_URL/<service>. */
  serviceUrls: Record<AgentName, string>;
  /** What chaos injects into the agents' calls (CHAOS_*); null while it is off, the default and production's. */
  chaos: ChaosSettings | null;
  telemetry: TelemetryConfig;
  /** The keys of continuation tokens (PAGING_TOKEN_KEY, PAGING_TOKEN_PREVIOUS_KEY). */
  pagingKeys: PagingKeys;
}

/** The key continuation tokens are signed with, and the one before it, still read after a rotation. */
export interface PagingKeys {
  readonly current: string;
  readonly previous: string | null;
}

/** Where telemetry goes: Application Insights when its connection string is set, else LOCAL_TRACING. */
export interface TelemetryConfig {
  /** Null: Application Insights is not configured. */
  azureMonitor: AzureMonitorConnection | null;
  localTracing: SettingValues["localTracing"];
  samplingRatio: SettingValues["samplingRatio"];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

/** A setting's name, for problems that quote it with its value. */
const nameOf = (key: keyof typeof SETTING_TABLE) => SETTING_TABLE[key].name;

/** The same table, seen as each key's schema producing that key's value: what lets parseSetting store it typed. */
type TypedTable<T extends SettingTable> = { readonly [K in keyof T]: Setting<z.ZodType<Parsed<T>[K]>> };

/**
 * Parses one setting from `env` into `values`, or says why not in `problems`. Generic over the key so that the value
 * keeps its own schema's type: in a loop over a union of keys, every value would widen to the union of them all.
 */
function parseSetting<T extends SettingTable, K extends keyof T>(
  table: TypedTable<T>,
  key: K,
  env: Env,
  values: Partial<Parsed<T>>,
  problems: string[],
): void {
  const { name, schema, default: fallback, secret } = table[key];
  const raw = env[name];
  const input = raw === undefined || raw.trim() === "" ? fallback : raw;
  const parsed = schema.safeParse(input);
  if (parsed.success) values[key] = parsed.data;
  else {
    const quoted = secret ? name : `${name}="${input}"`;
    problems.push(`${quoted}: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
}

/** Every setting of `table`, or undefined when one is bad (each bad one in `problems`). */
function parseTable<T extends SettingTable>(
  table: T & TypedTable<T>,
  env: Env,
  problems: string[],
): Parsed<T> | undefined {
  const values: Partial<Parsed<T>> = {};
  const keys = keysOf(table);
  for (const key of keys) parseSetting<T, typeof key>(table, key, env, values, problems);
  return isComplete(values, keys) ? values : undefined;
}

/** Object.keys, keeping the keys' type: the filter is true for each, and tells the compiler so. */
function keysOf<T extends object>(object: T): (keyof T & string)[] {
  return Object.keys(object).filter((key): key is keyof T & string => key in object);
}

/** Whether every key was filled: what lets a record built key by key count as whole, without a cast. */
function isComplete<T extends object>(partial: Partial<T>, keys: readonly (keyof T)[]): partial is T {
  return keys.every((key) => partial[key] !== undefined);
}

/** Object.fromEntries forgets which keys it was given; this keeps them. */
function recordOf<K extends string, V>(keys: readonly K[], value: (key: K) => V): Record<K, V> {
  const record: Partial<Record<K, V>> = {};
  for (const key of keys) record[key] = value(key);
  return isComplete(record, keys) ? record : unreachable(keys);
}

/** For a record just filled key by key, which isComplete confirms: it throws only if that loop is broken. */
function unreachable(what: unknown): never {
  throw new Error(`unreachable: ${String(what)}`);
}

function indexByName<N extends string>(
  settings: readonly (Setting & { readonly name: N })[],
): Record<N, Setting> {
  const index: Partial<Record<N, Setting>> = {};
  for (const setting of settings) index[setting.name] = setting;
  const names = settings.map((setting) => setting.name);
  return isComplete(index, names) ? index : unreachable(names);
}

/**
 * Why the app counts as production, or null: AZURE_FUNCTIONS_ENVIRONMENT says so, or is unset in Azure
 * (WEBSITE_SITE_NAME is set), where the Functions host then runs as Production.
 */
function productionReason(env: Env): string | null {
  const name = env.AZURE_FUNCTIONS_ENVIRONMENT?.trim();
  if (name) return name.toLowerCase() === "production" ? `AZURE_FUNCTIONS_ENVIRONMENT="${name}"` : null;
  return env.WEBSITE_SITE_NAME
    ? "AZURE_FUNCTIONS_ENVIRONMENT is unset in Azure (WEBSITE_SITE_NAME is set), where the host runs as Production"
    : null;
}

const CHAOS_RATES = ["chaosLatencyRate", "chaosFaultRate"] as const;

/**
 * The chaos the parsed CHAOS_* settings ask for, or null when nothing is to be injected. Chaos needs two
 * deliberate acts, a rate above 0 and the switch CHAOS_ENABLED=true, and the switch is refused in production:
 * a rate without the switch, or the switch in production, is a start-up problem.
 */
function parseChaos(
  values: Pick<SettingValues, ChaosSetting>,
  env: Env,
  problems: string[],
): ChaosSettings | null {
  const enabled = `${nameOf("chaosEnabled")}=true`;
  if (!values.chaosEnabled) {
    for (const rate of CHAOS_RATES.filter((r) => values[r] > 0)) {
      problems.push(
        `${nameOf(rate)}=${values[rate]}: refused without ${enabled}, the separate switch chaos needs (docs/chaos.md#chaos-in-staging)`,
      );
    }
    return null;
  }
  const production = productionReason(env);
  if (production) {
    problems.push(
      `${enabled}: refused in production (${production}); chaos is for staging, whose app sets AZURE_FUNCTIONS_ENVIRONMENT=Staging`,
    );
  }
  // Switched on with both rates at 0 is armed but idle: a staging run turned down without a second change.
  if (CHAOS_RATES.every((r) => values[r] === 0)) return null;
  return {
    services: values.chaosServices,
    latencyRate: values.chaosLatencyRate,
    latencyMs: Math.round(values.chaosLatencySeconds * 1000),
    faultRate: values.chaosFaultRate,
  };
}

/** What loadConfig reads besides SETTING_TABLE, which deriveConfig passes on as is. */
type Connections = Pick<AppConfig, "serviceBus" | "cosmos" | "serviceUrls"> &
  Pick<TelemetryConfig, "azureMonitor">;

/** The Functions host's own limit on a request body, in bytes (its default is 100 MB). */
export const HOST_BODY_LIMIT_SETTING = "FUNCTIONS_REQUEST_BODY_SIZE_LIMIT";

/**
 * What HOST_BODY_LIMIT_SETTING is set to: twice MAX_REQUEST_BYTES. The host refuses a body over it from its
 * declared Content-Length, before any of it is read or the app runs, so a client declaring 50 MB uploads nothing;
 * a body between the two limits is read and refused by the app, with a 413 that says which limit it passed.
 * local.settings.sample.json and infra/main.bicep ship this value (test/unit/config.test.ts, test/infra).
 */
export function hostRequestBodyLimit(maxRequestBytes: number): number {
  return 2 * maxRequestBytes;
}

/**
 * The config made of the parsed settings: the checks no single setting's schema can make, because they weigh one
 * setting against another or against the environment, and the fields made of several settings.
 */
function deriveConfig(
  values: SettingValues,
  connections: Connections,
  env: Env,
  problems: string[],
): AppConfig {
  const {
    chaosEnabled,
    chaosServices,
    chaosLatencyRate,
    chaosLatencySeconds,
    chaosFaultRate,
    localTracing,
    samplingRatio,
    // Folded into connections.serviceUrls by serviceUrlsOf.
    remoteServicesUrl: _remoteServicesUrl,
    serviceUrlList: _serviceUrlList,
    pagingTokenKey,
    pagingTokenPreviousKey,
    ...fields
  } = values;
  const chaos = parseChaos(
    { chaosEnabled, chaosServices, chaosLatencyRate, chaosLatencySeconds, chaosFaultRate },
    env,
    problems,
  );
  if (fields.agentAttemptTimeoutSeconds >= fields.stepTimeoutSeconds) {
    problems.push(
      `${nameOf("agentAttemptTimeoutSeconds")}=${fields.agentAttemptTimeoutSeconds}: expected less than ${nameOf("stepTimeoutSeconds")}=${fields.stepTimeoutSeconds}, or no attempt fits inside a step's deadline`,
    );
  }
  const outside = fields.statusQueues.filter((q) => !isAllowedReplyTo(q, fields.statusQueuePrefix));
  if (outside.length > 0) {
    problems.push(
      `${nameOf("statusQueues")}: ${outside.join(", ")} do(es) not start with ${nameOf("statusQueuePrefix")}="${fields.statusQueuePrefix}"`,
    );
  }
  const hostLimit = env[HOST_BODY_LIMIT_SETTING]?.trim();
  if (hostLimit && /^\d+$/.test(hostLimit) && Number(hostLimit) < fields.maxRequestBytes) {
    problems.push(
      `${HOST_BODY_LIMIT_SETTING}=${hostLimit}: expected at least ${nameOf("maxRequestBytes")}=${fields.maxRequestBytes} (${hostRequestBodyLimit(fields.maxRequestBytes)} as shipped), or the host refuses bodies the app accepts`,
    );
  }
  if (fields.operatorAuth === "header" && env.WEBSITE_SITE_NAME) {
    problems.push(
      `${nameOf("operatorAuth")}="header": not allowed in Azure (WEBSITE_SITE_NAME is set), where anyone could send the header; use platform`,
    );
  }
  // The sample settings' key is in this repository for anyone to read, and to sign tokens with.
  if (env.WEBSITE_SITE_NAME) {
    for (const setting of ["pagingTokenKey", "pagingTokenPreviousKey"] as const) {
      if (!values[setting]?.startsWith(LOCAL_PAGING_KEY_PREFIX)) continue;
      problems.push(
        `${nameOf(setting)}: a key for local runs (it starts with "${LOCAL_PAGING_KEY_PREFIX}") is not allowed in ` +
          "Azure (WEBSITE_SITE_NAME is set); use the Key Vault reference infra/ writes",
      );
    }
  }
  const budget = computeRetryBudget(fields);
  if (!budget.withinBudget) {
    problems.push(
      `${nameOf("retryBudgetPerStep")}=${budget.budget}: retry amplification over budget: ${budget.explanation}`,
    );
  }
  const { azureMonitor, ...connected } = connections;
  return {
    ...fields,
    ...connected,
    chaos,
    telemetry: { azureMonitor, localTracing, samplingRatio },
    pagingKeys: { current: pagingTokenKey, previous: pagingTokenPreviousKey },
  };
}

/** Parses every setting from `env`; collects all problems before failing, so one start-up shows them all. */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const values = parseTable(SETTING_TABLE, env, problems);
  const serviceUrls = serviceUrlsOf(env, problems);
  const serviceBus = parseServiceBus(env, problems);
  const cosmos = parseCosmos(env, problems);
  const azureMonitor = parseAzureMonitor(env, problems);
  if (problems.length > 0 || !values || !serviceUrls || !serviceBus || !cosmos) {
    throw new ConfigError(problems);
  }
  const config = deriveConfig(values, { serviceBus, cosmos, serviceUrls, azureMonitor }, env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

let cached: AppConfig | undefined;

/** The app's configuration, parsed on first use and then shared: settings are read once. */
export function getConfig(): AppConfig {
  cached ??= loadConfig();
  return cached;
}
