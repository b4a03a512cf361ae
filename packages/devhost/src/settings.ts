// What the devhost reads before it loads an app, the way `func start` does: the app root (the folder of
// host.json), local.settings.json `Values` turned into environment variables, the host.json options the
// devhost honours, and the %NAME% app-setting expressions of binding properties.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)"}: ${issue.message}`,
    )
    .join("; ");
}

function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`Cannot read ${what} ${file}: ${(error as Error).message}`);
  }
  try {
    // Both files are commonly edited by hand; the host tolerates a byte-order mark.
    return JSON.parse(text.replace(/^\uFEFF/, "")) as unknown;
  } catch (error) {
    throw new Error(`${what} ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

// ---- App root and entry ----

/** The Functions app root: the nearest folder at or above the entry holding host.json (else package.json). */
export function findAppRoot(entry: string): string {
  const start = path.dirname(path.resolve(entry));
  for (const marker of ["host.json", "package.json"]) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (fs.existsSync(path.join(dir, marker))) return dir;
      if (path.dirname(dir) === dir) break;
    }
  }
  return start;
}

/** `--app` when given, else package.json "main" of the project in `cwd` (the worker's rule). */
export function resolveAppEntry(cwd: string, app?: string): string {
  if (app) return path.resolve(cwd, app);
  const pkgFile = path.join(cwd, "package.json");
  if (!fs.existsSync(pkgFile)) {
    throw new Error(`No --app given and no package.json in ${cwd} to take "main" from.`);
  }
  const pkg = z.object({ main: z.string().min(1) }).safeParse(readJsonFile(pkgFile, "package.json"));
  if (!pkg.success) {
    throw new Error(
      `package.json in ${cwd} has no "main" entry (the compiled app entry, e.g. dist/src/index.js).`,
    );
  }
  return path.resolve(cwd, pkg.data.main);
}

// ---- local.settings.json ----

const localSettingsSchema = z.object({
  IsEncrypted: z.boolean().optional(),
  Values: z.record(
    z.string(),
    z.string({ message: "every value must be a string (quote numbers and booleans)" }),
  ),
  Host: z.looseObject({ LocalHttpPort: z.number().int().min(0).max(65535).optional() }).optional(),
  ConnectionStrings: z.record(z.string(), z.unknown()).optional(),
});

export interface LocalSettings {
  file: string;
  values: Record<string, string>;
  /** "Host": { "LocalHttpPort" }: the port func start uses when --port is not given. */
  localHttpPort?: number;
}

/** local.settings.json next to host.json, else the committed local.settings.sample.json; undefined if neither. */
export function findLocalSettingsFile(appRoot: string): string | undefined {
  for (const name of ["local.settings.json", "local.settings.sample.json"]) {
    const file = path.join(appRoot, name);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

export function readLocalSettings(file: string): LocalSettings {
  const parsed = localSettingsSchema.safeParse(readJsonFile(file, "settings file"));
  if (!parsed.success) throw new Error(`Settings file ${file} is invalid: ${describeIssues(parsed.error)}`);
  if (parsed.data.IsEncrypted) {
    throw new Error(
      `Settings file ${file} is encrypted ("IsEncrypted": true); the devhost reads plain values only.`,
    );
  }
  const localHttpPort = parsed.data.Host?.LocalHttpPort;
  return { file, values: parsed.data.Values, ...(localHttpPort !== undefined ? { localHttpPort } : {}) };
}

/**
 * Puts settings into process.env. File values never replace a variable that is already set (func start
 * behaves the same); `override` values (given programmatically) do. Returns a function that puts back
 * what was there before.
 */
export function applySettingsToEnv(
  fileValues: Record<string, string>,
  overrides: Record<string, string> = {},
  env: NodeJS.ProcessEnv = process.env,
): () => void {
  const previous = new Map<string, string | undefined>();
  const set = (name: string, value: string): void => {
    if (!previous.has(name)) previous.set(name, env[name]);
    env[name] = value;
  };
  for (const [name, value] of Object.entries(fileValues)) if (env[name] === undefined) set(name, value);
  for (const [name, value] of Object.entries(overrides)) set(name, value);
  return () => {
    for (const [name, value] of previous) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
  };
}

// ---- %NAME% app-setting expressions ----

/** Replaces every %NAME% with that app setting, as the host does for binding properties; unknown names fail. */
export function resolveAppSettingExpressions(
  value: string,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return value.replace(/%([^%]+)%/g, (_whole, name: string) => {
    const resolved = env[name];
    if (resolved === undefined) {
      throw new Error(`${where}: '%${name}%' does not resolve to a value (no app setting named ${name}).`);
    }
    return resolved;
  });
}

/** hh:mm:ss or d.hh:mm:ss (a .NET TimeSpan as host.json writes it), in milliseconds. */
export function parseTimeSpan(value: string, where: string): number {
  const match = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/.exec(value.trim());
  if (!match) throw new Error(`${where}: "${value}" is not a time span; expected hh:mm:ss or d.hh:mm:ss.`);
  const [, days, hours, minutes, seconds, fraction] = match;
  const ms =
    ((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 +
    Number(seconds) * 1000 +
    Math.round(Number(`0.${fraction ?? "0"}`) * 1000);
  return ms;
}

// ---- host.json ----

const hostJsonSchema = z.looseObject({
  version: z.string().optional(),
  functions: z.array(z.string()).optional(),
  extensions: z
    .looseObject({
      serviceBus: z
        .looseObject({
          maxConcurrentCalls: z.number().int().min(1).optional(),
          maxMessageBatchSize: z.number().int().min(1).optional(),
          autoCompleteMessages: z.boolean().optional(),
          maxAutoLockRenewalDuration: z.string().optional(),
          clientRetryOptions: z
            .looseObject({
              mode: z.enum(["exponential", "fixed", "Exponential", "Fixed"]).optional(),
              maxRetries: z.number().int().min(0).optional(),
              delay: z.string().optional(),
              maxDelay: z.string().optional(),
              tryTimeout: z.string().optional(),
            })
            .optional(),
        })
        .optional(),
      durableTask: z
        .looseObject({
          hubName: z.string().min(1).optional(),
          maxConcurrentActivityFunctions: z.number().int().min(1).optional(),
          httpSettings: z
            .looseObject({ defaultAsyncRequestSleepTimeMilliseconds: z.number().int().min(0).optional() })
            .optional(),
          storageProvider: z
            .looseObject({
              maxQueuePollingInterval: z.string().optional(),
              partitionCount: z.number().int().min(1).max(16).optional(),
            })
            .optional(),
        })
        .optional(),
      http: z.looseObject({ routePrefix: z.string().optional() }).optional(),
    })
    .optional(),
});

/**
 * host.json `extensions.serviceBus.clientRetryOptions`: how the host's Service Bus clients (the triggers' receivers,
 * the output binding's senders) retry an operation, and how long each try waits. Its defaults are those of
 * Azure.Messaging.ServiceBus's ServiceBusRetryOptions.
 */
export interface ClientRetryConfig {
  mode: "exponential" | "fixed";
  maxRetries: number;
  delayMs: number;
  maxDelayMs: number;
  tryTimeoutMs: number;
}

export interface HostConfig {
  /** host.json "functions": only these are loaded; undefined = all. */
  functions?: string[];
  serviceBus: {
    maxConcurrentCalls: number;
    /** The most messages one invocation of a batched (cardinality "many") trigger gets. */
    maxMessageBatchSize: number;
    autoCompleteMessages: boolean;
    maxAutoLockRenewalMs: number;
    clientRetry: ClientRetryConfig;
  };
  durableTask: {
    hubName?: string;
    maxConcurrentActivityFunctions?: number;
    httpPollIntervalMs?: number;
    /** storageProvider.maxQueuePollingInterval and partitionCount: what the azure-storage latency profile polls. */
    maxQueuePollingIntervalMs?: number;
    partitionCount?: number;
  };
  http: { routePrefix: string };
}

export const DEFAULT_HOST_CONFIG: HostConfig = {
  serviceBus: {
    maxConcurrentCalls: 16,
    maxMessageBatchSize: 1000, // the Service Bus extension's default
    autoCompleteMessages: true,
    maxAutoLockRenewalMs: 5 * 60_000,
    clientRetry: {
      mode: "exponential",
      maxRetries: 3,
      delayMs: 800,
      maxDelayMs: 60_000,
      tryTimeoutMs: 60_000,
    },
  },
  durableTask: {},
  http: { routePrefix: "api" },
};

/** Reads `<appRoot>/host.json` (defaults when absent); %NAME% in the hub name resolves against `env`. */
export function readHostConfig(appRoot: string, env: NodeJS.ProcessEnv = process.env): HostConfig {
  const file = path.join(appRoot, "host.json");
  if (!fs.existsSync(file)) return structuredClone(DEFAULT_HOST_CONFIG);
  const parsed = hostJsonSchema.safeParse(readJsonFile(file, "host.json"));
  if (!parsed.success) throw new Error(`host.json ${file} is invalid: ${describeIssues(parsed.error)}`);
  const ext = parsed.data.extensions ?? {};
  const sb = ext.serviceBus ?? {};
  const retry = sb.clientRetryOptions ?? {};
  const retryDefaults = DEFAULT_HOST_CONFIG.serviceBus.clientRetry;
  const span = (value: string | undefined, name: string, fallback: number) =>
    value === undefined
      ? fallback
      : parseTimeSpan(value, `host.json extensions.serviceBus.clientRetryOptions.${name}`);
  const hubName = ext.durableTask?.hubName;
  const maxActivities = ext.durableTask?.maxConcurrentActivityFunctions;
  const httpPollIntervalMs = ext.durableTask?.httpSettings?.defaultAsyncRequestSleepTimeMilliseconds;
  const storage = ext.durableTask?.storageProvider ?? {};
  const routePrefix = ext.http?.routePrefix ?? DEFAULT_HOST_CONFIG.http.routePrefix;
  return {
    ...(parsed.data.functions ? { functions: parsed.data.functions } : {}),
    serviceBus: {
      maxConcurrentCalls: sb.maxConcurrentCalls ?? DEFAULT_HOST_CONFIG.serviceBus.maxConcurrentCalls,
      maxMessageBatchSize: sb.maxMessageBatchSize ?? DEFAULT_HOST_CONFIG.serviceBus.maxMessageBatchSize,
      autoCompleteMessages: sb.autoCompleteMessages ?? DEFAULT_HOST_CONFIG.serviceBus.autoCompleteMessages,
      maxAutoLockRenewalMs:
        sb.maxAutoLockRenewalDuration !== undefined
          ? parseTimeSpan(
              sb.maxAutoLockRenewalDuration,
              `host.json extensions.serviceBus.maxAutoLockRenewalDuration`,
            )
          : DEFAULT_HOST_CONFIG.serviceBus.maxAutoLockRenewalMs,
      clientRetry: {
        mode: retry.mode?.toLowerCase() === "fixed" ? "fixed" : "exponential",
        maxRetries: retry.maxRetries ?? retryDefaults.maxRetries,
        delayMs: span(retry.delay, "delay", retryDefaults.delayMs),
        maxDelayMs: span(retry.maxDelay, "maxDelay", retryDefaults.maxDelayMs),
        tryTimeoutMs: span(retry.tryTimeout, "tryTimeout", retryDefaults.tryTimeoutMs),
      },
    },
    durableTask: {
      ...(hubName
        ? { hubName: resolveAppSettingExpressions(hubName, "host.json extensions.durableTask.hubName", env) }
        : {}),
      ...(maxActivities !== undefined ? { maxConcurrentActivityFunctions: maxActivities } : {}),
      ...(httpPollIntervalMs !== undefined ? { httpPollIntervalMs } : {}),
      ...(storage.maxQueuePollingInterval !== undefined
        ? {
            maxQueuePollingIntervalMs: parseTimeSpan(
              storage.maxQueuePollingInterval,
              "host.json extensions.durableTask.storageProvider.maxQueuePollingInterval",
            ),
          }
        : {}),
      ...(storage.partitionCount !== undefined ? { partitionCount: storage.partitionCount } : {}),
    },
    // The host trims slashes: "/api/" and "api" mean the same prefix; "" means none.
    http: { routePrefix: routePrefix.replace(/^\/+|\/+$/g, "") },
  };
}

// ---- Connections ----

/** Key=Value;... pairs of a connection string; keys compared case-insensitively, as the SDKs do. */
export function parseConnectionString(value: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const part of value.split(";")) {
    const at = part.indexOf("=");
    if (at <= 0) continue;
    pairs.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim());
  }
  return pairs;
}

/**
 * The connection string a binding's `connection` names. Like the host, an unset name falls back to
 * `AzureWebJobs<name>`, and a binding without `connection` uses `AzureWebJobs<defaultName>`. Identity-based
 * connections (`<name>__fullyQualifiedNamespace`) need Microsoft Entra ID, which only Azure provides.
 */
export function resolveConnectionString(
  connection: string | undefined,
  defaultName: string,
  functionName: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const name = connection && connection.length > 0 ? connection : `AzureWebJobs${defaultName}`;
  const value = env[name] ?? env[`AzureWebJobs${name}`];
  if (value && value.includes("=")) return value;
  const identity = Object.keys(env).find((key) => key.toLowerCase().startsWith(`${name.toLowerCase()}__`));
  if (identity) {
    throw new Error(
      `Function ${functionName}: connection "${name}" is identity-based (${identity}); the devhost needs a ` +
        `connection string in the app setting "${name}" (identity-based connections work in Azure only).`,
    );
  }
  throw new Error(
    `Function ${functionName}: app setting "${name}" (the binding's connection) is not set to a connection ` +
      `string. Add it to local.settings.json Values.`,
  );
}
