/**
 * Where the submit CLI connects: a connection string or a namespace, from its flags or from the settings the app
 * itself reads locally, and which setting said so.
 */
import fs from "node:fs";
import path from "node:path";
import { ServiceBusClient, parseServiceBusConnectionString, type RetryOptions } from "@azure/service-bus";
import { readLocalSettings } from "devhost";
import { DEFAULT_STATUS_QUEUE_PREFIX, UsageError, type SubmitArgs } from "./args";

const SETTINGS_FILES = ["local.settings.json", "local.settings.sample.json"] as const;

/**
 * A CLI should fail in seconds, not after the SDK's minute-long default retries: a refused connection fails at
 * once, an unanswered one after timeoutInMs per attempt.
 */
export const SUBMIT_RETRY_OPTIONS: RetryOptions = {
  maxRetries: 2,
  retryDelayInMs: 500,
  maxRetryDelayInMs: 2_000,
  timeoutInMs: 10_000,
};

/** Where the client connects, and which setting said so (printed, so a user knows what was used). */
export type SubmitTarget =
  | { kind: "connectionString"; connectionString: string; endpoint: string; local: boolean; source: string }
  | { kind: "namespace"; fullyQualifiedNamespace: string; endpoint: string; local: boolean; source: string };

/** A setting by the precedence the app uses locally: environment, then local.settings.json, then the sample. */
function settingSources(
  env: NodeJS.ProcessEnv,
  cwd: string,
): Array<{ source: string; values: Record<string, string> }> {
  const sources: Array<{ source: string; values: Record<string, string> }> = [];
  const fromEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) fromEnv[name] = value;
  sources.push({ source: "environment", values: fromEnv });
  for (const name of SETTINGS_FILES) {
    const file = path.join(cwd, name);
    if (fs.existsSync(file)) sources.push({ source: name, values: readLocalSettings(file).values });
  }
  return sources;
}

function isLocalHost(host: string): boolean {
  const bare = host.replace(/^\[|\](:\d+)?$/g, "").replace(/:\d+$/, "");
  return bare === "127.0.0.1" || bare === "localhost" || bare === "::1";
}

function connectionTarget(connectionString: string, source: string, what: string): SubmitTarget {
  let properties;
  try {
    properties = parseServiceBusConnectionString(connectionString);
  } catch (error) {
    throw new UsageError(
      `${what}: expected a Service Bus connection string ` +
        `(Endpoint=sb://...;SharedAccessKeyName=...;SharedAccessKey=...): ${(error as Error).message}`,
    );
  }
  const hasKey = properties.sharedAccessKeyName !== undefined && properties.sharedAccessKey !== undefined;
  if (!hasKey && properties.sharedAccessSignature === undefined) {
    throw new UsageError(
      `${what}: the connection string has no SharedAccessKeyName/SharedAccessKey or SharedAccessSignature`,
    );
  }
  const emulator = /(^|;)\s*UseDevelopmentEmulator\s*=\s*true\s*(;|$)/i.test(connectionString);
  return {
    kind: "connectionString",
    connectionString,
    endpoint: properties.endpoint.replace(/\/$/, ""),
    local: emulator || isLocalHost(properties.fullyQualifiedNamespace),
    source,
  };
}

function namespaceTarget(namespace: string, source: string, what: string): SubmitTarget {
  const fqdn = namespace
    .trim()
    .replace(/^(sb|amqps?):\/\//i, "")
    .replace(/\/+$/, "");
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/.test(fqdn)) {
    throw new UsageError(
      `${what}: expected a fully qualified namespace such as myns.servicebus.windows.net, got "${namespace}"`,
    );
  }
  return {
    kind: "namespace",
    fullyQualifiedNamespace: fqdn,
    endpoint: `sb://${fqdn}`,
    local: isLocalHost(fqdn),
    source,
  };
}

/**
 * The connection to use: --connection or --namespace, else ServiceBusConnection (a connection string) or
 * ServiceBusConnection__fullyQualifiedNamespace (identity) from the environment, local.settings.json, then
 * local.settings.sample.json.
 */
export function resolveTarget(
  args: Pick<SubmitArgs, "connection" | "namespace">,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): SubmitTarget {
  if (args.connection !== undefined) return connectionTarget(args.connection, "--connection", "--connection");
  if (args.namespace !== undefined) return namespaceTarget(args.namespace, "--namespace", "--namespace");
  for (const { source, values } of settingSources(env, cwd)) {
    const connectionString = values.ServiceBusConnection?.trim();
    if (connectionString)
      return connectionTarget(connectionString, source, `ServiceBusConnection in ${source}`);
    const fqdn = values.ServiceBusConnection__fullyQualifiedNamespace?.trim();
    if (fqdn)
      return namespaceTarget(fqdn, source, `ServiceBusConnection__fullyQualifiedNamespace in ${source}`);
  }
  throw new UsageError(
    `no Service Bus connection: pass --connection or --namespace, set ServiceBusConnection, or run from the ` +
      `project folder (it has local.settings.sample.json); looked in ${cwd}`,
  );
}

/** The statusQueuePrefix the app enforces on replyTo, from the same settings the connection comes from. */
export function statusQueuePrefixOf(env: NodeJS.ProcessEnv, cwd: string): string {
  for (const { values } of settingSources(env, cwd)) {
    if (values.STATUS_QUEUE_PREFIX) return values.STATUS_QUEUE_PREFIX;
  }
  return DEFAULT_STATUS_QUEUE_PREFIX;
}

export async function createClient(target: SubmitTarget): Promise<ServiceBusClient> {
  const options = { retryOptions: SUBMIT_RETRY_OPTIONS };
  if (target.kind === "connectionString") return new ServiceBusClient(target.connectionString, options);
  // Loaded only when used: @azure/identity is large, and most runs talk to the emulator.
  const { DefaultAzureCredential } = await import("@azure/identity");
  return new ServiceBusClient(target.fullyQualifiedNamespace, new DefaultAzureCredential(), options);
}
