import { z } from "zod";
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

/** Where a service's base URL points by default: its routes on the local remote services simulator. */
export const localServiceUrl = (service: string): string => `http://127.0.0.1:7081/${service}`;

/** The base URL of each declared service (src/domain/process.ts): `<SERVICE>_URL`, such as INVENTORY_URL. */
const SERVICE_URL_SETTINGS = Object.fromEntries(
  AGENT_NAMES.map((service) => [
    serviceUrlSetting(service),
    { schema: url, default: localServiceUrl(service) },
  ]),
) as Record<ServiceUrlSetting, { schema: typeof url; default: string }>;
export type ServiceUrlSetting = ReturnType<typeof serviceUrlSetting<AgentName>>;

/** Bound on STATUS_QUEUES: the app keeps one open sender per status queue. */
export const MAX_STATUS_QUEUES = 50;

/** Setting name → schema of its string value and default. The names are contract (docs/contract.md#settings). */
export const SETTINGS = {
  COSMOS_DATABASE: {
    schema: z.string().trim().min(1, { error: "expected a database name" }),
    default: "sas",
  },
  TASK_HUB_NAME: {
    schema: z
      .string()
      .trim()
      .regex(/^[A-Za-z][A-Za-z0-9]{2,44}$/, {
        error: "expected 3-45 letters and digits, starting with a letter",
      }),
    default: "sas",
  },
  STARTER_SCHEDULE: { schema: ncrontab, default: "*/5 * * * * *" },
  SUPERVISOR_SCHEDULE: { schema: ncrontab, default: "*/15 * * * * *" },
  STEP_TIMEOUT_SECONDS: { schema: positiveInt("seconds"), default: "30" },
  CLAIM_TIMEOUT_SECONDS: { schema: positiveInt("seconds"), default: "60" },
  SUPERVISOR_MAX_FAILURES: { schema: positiveInt("failed attempts retried before Error"), default: "3" },
  SUPERVISOR_BACKOFF_SECONDS: { schema: positiveInt("seconds"), default: "10" },
  SUPERVISOR_PAGE_SIZE: { schema: positiveInt("records per page"), default: "100" },
  SUPERVISOR_WINDOW_HOURS: { schema: positiveInt("hours"), default: "24" },
  SUPERVISOR_LEASE_SECONDS: { schema: positiveInt("seconds"), default: "60" },
  MAX_IN_FLIGHT: { schema: positiveInt("orders"), default: "50" },
  MAX_PENDING_BACKLOG: { schema: positiveInt("orders"), default: "1000" },
  RETRY_BUDGET_PER_STEP: { schema: positiveInt("calls"), default: "30" },
  AGENT_MAX_ATTEMPTS: { schema: positiveInt("calls per delivered request"), default: "3" },
  AGENT_ATTEMPT_TIMEOUT_SECONDS: { schema: positiveInt("seconds"), default: "5" },
  AGENT_REQUEST_MAX_DELIVERY_COUNT: {
    schema: positiveInt("the *-requests queues' MaxDeliveryCount"),
    default: "2",
  },
  /** How long a remote service's shared circuit breaker stays open before one probe call (doubling per failed probe). */
  BREAKER_OPEN_SECONDS: { schema: positiveInt("seconds"), default: "10" },
  /**
   * How long an order may wait parked for an unavailable service before its attempts count as failures again
   * (and it can end in Error, with an alert of its own).
   */
  OUTAGE_MAX_SECONDS: { schema: positiveInt("seconds"), default: "3600" },
  MAX_REQUEST_BYTES: { schema: positiveInt("bytes"), default: "65536" },
  STATUS_QUEUE_PREFIX: {
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
  STATUS_QUEUES: {
    schema: z
      .string()
      .trim()
      .transform((v) =>
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
  ...SERVICE_URL_SETTINGS,
  /**
   * Where operators' identities come from. `platform`: the x-ms-client-principal header of the platform's
   * authentication (Entra ID), believed only while that authentication is on. `header`: the header as the
   * client sends it, for local runtimes with no platform in front (the devhost, func start); refused in Azure.
   */
  OPERATOR_AUTH: {
    schema: z.enum(["platform", "header"], { error: "expected platform or header" }),
    default: "platform",
  },
  /**
   * The remote services simulator whose /_faults the dashboard's fault panel drives (devhost only). Empty, as in
   * Azure, hides the panel: there is nothing to break on purpose in production.
   */
  DASHBOARD_SIMULATOR_URL: {
    schema: z
      .string()
      .trim()
      .refine((v) => v === "" || url.safeParse(v).success, {
        error: "expected an absolute http(s) URL, or empty to hide the fault panel",
      }),
    default: "",
  },
  /**
   * Chaos in staging (docs/chaos.md#chaos-in-staging): latency and faults injected into the agents' remote calls.
   * Off unless this separate switch is true: without it every CHAOS_*_RATE must be 0, and with it the app
   * refuses to start in production (AZURE_FUNCTIONS_ENVIRONMENT).
   */
  CHAOS_ENABLED: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .refine((v) => v === "true" || v === "false", { error: "expected true or false" })
      .transform((v) => v === "true"),
    default: "false",
  },
  /** The agents whose calls chaos hits: `*` or some of the declared services (src/domain/process.ts). */
  CHAOS_SERVICES: {
    schema: z
      .string()
      .trim()
      .transform((v) =>
        v === "*"
          ? [...AGENT_NAMES]
          : v
              .split(",")
              .map((name) => name.trim())
              .filter((name) => name !== ""),
      )
      .refine(
        (names) =>
          names.length > 0 && names.every((name) => (AGENT_NAMES as readonly string[]).includes(name)),
        { error: `expected * or comma-separated services among ${AGENT_NAMES.join(", ")}` },
      ),
    default: "*",
  },
  /** Share of attempts delayed by CHAOS_LATENCY_SECONDS before the call. */
  CHAOS_LATENCY_RATE: { schema: share, default: "0" },
  CHAOS_LATENCY_SECONDS: {
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
  CHAOS_FAULT_RATE: { schema: share, default: "0" },
  /**
   * Where the app's spans go when Application Insights is not configured (docs/operations.md#tracing): nowhere,
   * a bounded buffer in this process that GET /api/orders/{orderId}/trace and the dashboard read, or stdout.
   */
  LOCAL_TRACING: {
    schema: z.enum(["off", "memory", "console"], { error: "expected off, memory or console" }),
    default: "off",
  },
  /**
   * Share of orders whose trace goes to Application Insights, decided on the trace id, so that every instance keeps
   * or drops the same whole traces.
   */
  TRACE_SAMPLING_RATIO: {
    schema: z
      .string()
      .trim()
      .regex(DECIMAL, { error: "expected a share of traces from 0 to 1, such as 0.25" })
      .transform(Number)
      .refine((n) => n <= 1, { error: "expected a share of traces from 0 to 1, such as 0.25" }),
    default: "1",
  },
} as const;

export type SettingName = keyof typeof SETTINGS;
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export type ServiceBusConnectionConfig =
  | { kind: "connectionString"; connectionString: string }
  | { kind: "identity"; fullyQualifiedNamespace: string; clientId?: string };

export type CosmosConnectionConfig =
  { kind: "key"; endpoint: string; key: string } | { kind: "identity"; endpoint: string; clientId?: string };

export interface AppConfig {
  serviceBus: ServiceBusConnectionConfig;
  cosmos: CosmosConnectionConfig;
  cosmosDatabase: string;
  taskHubName: string;
  starterSchedule: string;
  supervisorSchedule: string;
  stepTimeoutSeconds: number;
  claimTimeoutSeconds: number;
  supervisorMaxFailures: number;
  supervisorBackoffSeconds: number;
  supervisorPageSize: number;
  supervisorWindowHours: number;
  supervisorLeaseSeconds: number;
  maxInFlight: number;
  maxPendingBacklog: number;
  retryBudgetPerStep: number;
  agentMaxAttempts: number;
  agentAttemptTimeoutSeconds: number;
  breakerOpenSeconds: number;
  outageMaxSeconds: number;
  agentRequestMaxDeliveryCount: number;
  maxRequestBytes: number;
  statusQueuePrefix: string;
  /** The status queues a replyTo may name (STATUS_QUEUES), each under statusQueuePrefix. */
  statusQueues: readonly string[];
  /** Base URL of each declared service, from its `<SERVICE>_URL` setting. */
  serviceUrls: Record<AgentName, string>;
  /** Where operator identities come from (OPERATOR_AUTH). */
  operatorAuth: "platform" | "header";
  /** Base URL of the simulator for the dashboard's fault panel; "" when there is none (Azure). */
  dashboardSimulatorUrl: string;
  /** What chaos injects into the agents' calls (CHAOS_*); null while it is off, the default and production's. */
  chaos: ChaosSettings | null;
  telemetry: TelemetryConfig;
}

/** Where telemetry goes: Application Insights when its connection string is set, else LOCAL_TRACING. */
export interface TelemetryConfig {
  /** APPLICATIONINSIGHTS_CONNECTION_STRING, and the identity that signs in to ingestion; null: not configured. */
  azureMonitor: {
    connectionString: string;
    /** From APPLICATIONINSIGHTS_AUTHENTICATION_STRING: Entra ID sign-in, with a user-assigned identity's client id. */
    credential: { kind: "identity"; clientId?: string } | { kind: "none" };
  } | null;
  localTracing: "off" | "memory" | "console";
  samplingRatio: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

function parseServiceBus(env: Env, problems: string[]): ServiceBusConnectionConfig | undefined {
  const connectionString = env.ServiceBusConnection?.trim();
  const namespace = env.ServiceBusConnection__fullyQualifiedNamespace?.trim();
  if (connectionString) {
    if (
      !/Endpoint=sb:\/\/[^;]+/i.test(connectionString) ||
      !/SharedAccessKey(Name)?=|SharedAccessSignature=/i.test(connectionString)
    ) {
      problems.push(
        "ServiceBusConnection: expected a connection string like Endpoint=sb://<host>;SharedAccessKeyName=<name>;SharedAccessKey=<key>",
      );
      return undefined;
    }
    return { kind: "connectionString", connectionString };
  }
  if (namespace) {
    if (!/^[A-Za-z0-9.-]+$/.test(namespace)) {
      problems.push(
        `ServiceBusConnection__fullyQualifiedNamespace="${namespace}": expected a host name such as mybus.servicebus.windows.net`,
      );
      return undefined;
    }
    const clientId = env.ServiceBusConnection__clientId?.trim();
    return { kind: "identity", fullyQualifiedNamespace: namespace, ...(clientId ? { clientId } : {}) };
  }
  problems.push(
    "ServiceBusConnection: missing; set ServiceBusConnection (connection string) or ServiceBusConnection__fullyQualifiedNamespace (managed identity)",
  );
  return undefined;
}

function parseCosmos(env: Env, problems: string[]): CosmosConnectionConfig | undefined {
  const connectionString = env.CosmosConnection?.trim();
  const endpoint = env.CosmosConnection__accountEndpoint?.trim();
  if (connectionString) {
    const parts = Object.fromEntries(
      connectionString
        .split(";")
        .filter((p) => p.includes("="))
        .map((p) => {
          const i = p.indexOf("=");
          return [p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim()];
        }),
    );
    const accountEndpoint = parts.accountendpoint;
    const key = parts.accountkey;
    if (!accountEndpoint || !/^https?:\/\//.test(accountEndpoint) || !key) {
      problems.push(
        "CosmosConnection: expected a connection string like AccountEndpoint=https://<account>.documents.azure.com:443/;AccountKey=<key>;",
      );
      return undefined;
    }
    return { kind: "key", endpoint: accountEndpoint, key };
  }
  if (endpoint) {
    if (!/^https?:\/\/[^/]+/.test(endpoint)) {
      problems.push(
        `CosmosConnection__accountEndpoint="${endpoint}": expected an https URL such as https://<account>.documents.azure.com:443/`,
      );
      return undefined;
    }
    const clientId = env.CosmosConnection__clientId?.trim();
    return { kind: "identity", endpoint, ...(clientId ? { clientId } : {}) };
  }
  problems.push(
    "CosmosConnection: missing; set CosmosConnection (connection string) or CosmosConnection__accountEndpoint (managed identity)",
  );
  return undefined;
}

/**
 * Application Insights, as the Functions host reads it: the connection string, and the authentication string that
 * makes ingestion use Entra ID (`Authorization=AAD`, `ClientId=<client id>` for a user-assigned identity), which
 * the deployed component requires (its local authentication is off).
 */
function parseAzureMonitor(env: Env, problems: string[]): TelemetryConfig["azureMonitor"] {
  const connectionString = env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim();
  if (!connectionString) return null;
  if (!/(^|;)\s*(InstrumentationKey|IngestionEndpoint)=/i.test(connectionString)) {
    problems.push(
      "APPLICATIONINSIGHTS_CONNECTION_STRING: expected a connection string like InstrumentationKey=<guid>;IngestionEndpoint=https://...",
    );
    return null;
  }
  const authentication = env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING?.trim();
  if (!authentication) return { connectionString, credential: { kind: "none" } };
  const parts = new Map(
    authentication
      .split(";")
      .filter((p) => p.includes("="))
      .map((p) => {
        const i = p.indexOf("=");
        return [p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim()] as const;
      }),
  );
  const clientId = parts.get("clientid");
  if (
    parts.get("authorization")?.toUpperCase() !== "AAD" ||
    (clientId !== undefined && !/^[0-9a-f-]{36}$/i.test(clientId))
  ) {
    problems.push(
      "APPLICATIONINSIGHTS_AUTHENTICATION_STRING: expected Authorization=AAD, with ClientId=<client id> for a user-assigned identity",
    );
    return null;
  }
  return { connectionString, credential: { kind: "identity", ...(clientId ? { clientId } : {}) } };
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

const CHAOS_RATES = ["CHAOS_LATENCY_RATE", "CHAOS_FAULT_RATE"] as const;

/**
 * The chaos the parsed CHAOS_* settings ask for, or null when nothing is to be injected. Chaos needs two
 * deliberate acts, a rate above 0 and the switch CHAOS_ENABLED=true, and the switch is refused in production:
 * a rate without the switch, or the switch in production, is a start-up problem.
 */
function parseChaos(
  values: Record<SettingName, unknown>,
  env: Env,
  problems: string[],
): ChaosSettings | null {
  const rate = (name: (typeof CHAOS_RATES)[number]) => values[name] as number;
  if (values.CHAOS_ENABLED !== true) {
    for (const name of CHAOS_RATES.filter((r) => rate(r) > 0)) {
      problems.push(
        `${name}=${rate(name)}: refused without CHAOS_ENABLED=true, the separate switch chaos needs (docs/chaos.md#chaos-in-staging)`,
      );
    }
    return null;
  }
  const production = productionReason(env);
  if (production) {
    problems.push(
      `CHAOS_ENABLED=true: refused in production (${production}); chaos is for staging, whose app sets AZURE_FUNCTIONS_ENVIRONMENT=Staging`,
    );
  }
  // Switched on with both rates at 0 is armed but idle: a staging run turned down without a second change.
  if (CHAOS_RATES.every((r) => rate(r) === 0)) return null;
  return {
    services: values.CHAOS_SERVICES as AgentName[],
    latencyRate: rate("CHAOS_LATENCY_RATE"),
    latencyMs: Math.round((values.CHAOS_LATENCY_SECONDS as number) * 1000),
    faultRate: rate("CHAOS_FAULT_RATE"),
  };
}

/** Parses every setting from `env`; collects all problems before failing, so one start-up shows them all. */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const values = {} as Record<SettingName, unknown>;
  for (const name of SETTING_NAMES) {
    const spec = SETTINGS[name];
    const raw = env[name];
    const input = raw === undefined || raw.trim() === "" ? spec.default : raw;
    const parsed = spec.schema.safeParse(input);
    if (parsed.success) values[name] = parsed.data;
    else problems.push(`${name}="${input}": ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  const serviceBus = parseServiceBus(env, problems);
  const cosmos = parseCosmos(env, problems);
  const azureMonitor = parseAzureMonitor(env, problems);
  const n = (name: SettingName) => values[name] as number;
  const s = (name: SettingName) => values[name] as string;

  let chaos: ChaosSettings | null = null;
  if (problems.length === 0) {
    chaos = parseChaos(values, env, problems);
    if (n("AGENT_ATTEMPT_TIMEOUT_SECONDS") >= n("STEP_TIMEOUT_SECONDS")) {
      problems.push(
        `AGENT_ATTEMPT_TIMEOUT_SECONDS=${n("AGENT_ATTEMPT_TIMEOUT_SECONDS")}: expected less than STEP_TIMEOUT_SECONDS=${n("STEP_TIMEOUT_SECONDS")}, or no attempt fits inside a step's deadline`,
      );
    }
    const outside = (values.STATUS_QUEUES as string[]).filter(
      (q) => !isAllowedReplyTo(q, s("STATUS_QUEUE_PREFIX")),
    );
    if (outside.length > 0) {
      problems.push(
        `STATUS_QUEUES: ${outside.join(", ")} do(es) not start with STATUS_QUEUE_PREFIX="${s("STATUS_QUEUE_PREFIX")}"`,
      );
    }
    if (s("OPERATOR_AUTH") === "header" && env.WEBSITE_SITE_NAME) {
      problems.push(
        `OPERATOR_AUTH="header": not allowed in Azure (WEBSITE_SITE_NAME is set), where anyone could send the header; use platform`,
      );
    }
    const budget = computeRetryBudget({
      agentMaxAttempts: n("AGENT_MAX_ATTEMPTS"),
      agentRequestMaxDeliveryCount: n("AGENT_REQUEST_MAX_DELIVERY_COUNT"),
      supervisorMaxFailures: n("SUPERVISOR_MAX_FAILURES"),
      retryBudgetPerStep: n("RETRY_BUDGET_PER_STEP"),
    });
    if (!budget.withinBudget) {
      problems.push(
        `RETRY_BUDGET_PER_STEP=${budget.budget}: retry amplification over budget: ${budget.explanation}`,
      );
    }
  }
  if (problems.length > 0 || !serviceBus || !cosmos) throw new ConfigError(problems);

  return {
    serviceBus,
    cosmos,
    cosmosDatabase: s("COSMOS_DATABASE"),
    taskHubName: s("TASK_HUB_NAME"),
    starterSchedule: s("STARTER_SCHEDULE"),
    supervisorSchedule: s("SUPERVISOR_SCHEDULE"),
    stepTimeoutSeconds: n("STEP_TIMEOUT_SECONDS"),
    claimTimeoutSeconds: n("CLAIM_TIMEOUT_SECONDS"),
    supervisorMaxFailures: n("SUPERVISOR_MAX_FAILURES"),
    supervisorBackoffSeconds: n("SUPERVISOR_BACKOFF_SECONDS"),
    supervisorPageSize: n("SUPERVISOR_PAGE_SIZE"),
    supervisorWindowHours: n("SUPERVISOR_WINDOW_HOURS"),
    supervisorLeaseSeconds: n("SUPERVISOR_LEASE_SECONDS"),
    maxInFlight: n("MAX_IN_FLIGHT"),
    maxPendingBacklog: n("MAX_PENDING_BACKLOG"),
    retryBudgetPerStep: n("RETRY_BUDGET_PER_STEP"),
    agentMaxAttempts: n("AGENT_MAX_ATTEMPTS"),
    agentAttemptTimeoutSeconds: n("AGENT_ATTEMPT_TIMEOUT_SECONDS"),
    breakerOpenSeconds: n("BREAKER_OPEN_SECONDS"),
    outageMaxSeconds: n("OUTAGE_MAX_SECONDS"),
    agentRequestMaxDeliveryCount: n("AGENT_REQUEST_MAX_DELIVERY_COUNT"),
    maxRequestBytes: n("MAX_REQUEST_BYTES"),
    statusQueuePrefix: s("STATUS_QUEUE_PREFIX"),
    statusQueues: values.STATUS_QUEUES as string[],
    serviceUrls: Object.fromEntries(AGENT_NAMES.map((a) => [a, s(serviceUrlSetting(a))])) as Record<
      AgentName,
      string
    >,
    operatorAuth: s("OPERATOR_AUTH") as AppConfig["operatorAuth"],
    dashboardSimulatorUrl: s("DASHBOARD_SIMULATOR_URL").replace(/\/+$/, ""),
    chaos,
    telemetry: {
      azureMonitor,
      localTracing: s("LOCAL_TRACING") as TelemetryConfig["localTracing"],
      samplingRatio: n("TRACE_SAMPLING_RATIO"),
    },
  };
}

let cached: AppConfig | undefined;

/** The app's configuration, parsed on first use and then shared: settings are read once. */
export function getConfig(): AppConfig {
  cached ??= loadConfig();
  return cached;
}
