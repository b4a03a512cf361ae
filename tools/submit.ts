/**
 * `npm run submit -- --count N`: sends valid sample orders to the `orders` queue with the real
 * @azure/service-bus client, against the local emulator by default or any namespace. See docs/submit.md.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  ServiceBusClient,
  parseServiceBusConnectionString,
  type RetryOptions,
  type ServiceBusMessage,
  type ServiceBusSender,
} from "@azure/service-bus";
import { readLocalSettings } from "devhost";
import { z } from "zod";
import { submissionMessageId, type Order } from "../src/domain/order";
import {
  DEFAULT_SAMPLE_REPLY_TO,
  SAMPLE_PAYMENT_LIMIT,
  defaultOrderPrefix,
  exceedsPaymentLimit,
  sampleOrder,
  type SampleOrderOptions,
} from "./sampleOrders";
import { seededRandom } from "./seededRandom";

export interface SubmitIo {
  log(line: string): void;
  error(line: string): void;
  /** Where ServiceBusConnection and friends are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Folder holding local.settings(.sample).json; default process.cwd() (npm runs scripts in the project root). */
  cwd?: string;
}

export const DEFAULT_QUEUE = "orders";
const DEFAULT_STATUS_QUEUE_PREFIX = "status-";
const MAX_COUNT = 1_000_000;
const MAX_ORDER_ID_LENGTH = 64;
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

const USAGE = `Usage: npm run submit -- --count N [options]

Sends N valid sample orders to a Service Bus queue (the app's submission queue by default).

  --count N               how many orders (required; a whole number >= 1)
  --connection <string>   Service Bus connection string (default: the ServiceBusConnection setting:
                          environment, then local.settings.json, then local.settings.sample.json,
                          which points at the local emulator)
  --namespace <fqdn>      a namespace such as myns.servicebus.windows.net, signed in with
                          DefaultAzureCredential (az login, azd auth login, managed identity, AZURE_* vars)
  --queue <name>          target queue (default ${DEFAULT_QUEUE})
  --prefix <text>         orderIds are <prefix>-1 .. <prefix>-N (default ORD-<UTC yyyymmddHHMMss>)
  --reply-to <queue>      status queue named in each order, starting with ${DEFAULT_STATUS_QUEUE_PREFIX} (default ${DEFAULT_SAMPLE_REPLY_TO})
  --no-reply-to           leave replyTo out (no status messages)
  --declined <fraction>   fraction 0..1 of orders whose total exceeds the payment limit of ${SAMPLE_PAYMENT_LIMIT}, so
                          the simulator declines the charge and the workflow compensates (default 0)
  --seed <int>            repeatable orders (the same seed and prefix give the same orders)
  --no-batch              send one message per call instead of batches (createMessageBatch)
  --help                  this text

Messages: body = the order (JSON), messageId = <orderId>:<16 hex digits of the order's fingerprint>, contentType
application/json. Re-running with the same --prefix and --seed sends the same orders again, which the app takes as
no-ops; a different order under a known orderId is refused (set aside on rejected-messages, with an OrderConflict alert).`;

/** A mistake in the command line; main prints it with a pointer to --help. */
export class UsageError extends Error {}

export interface SubmitArgs {
  count: number;
  queue: string;
  prefix: string;
  replyTo: string | null;
  declined: number;
  seed?: number;
  batch: boolean;
  connection?: string;
  namespace?: string;
}

/** Where the client connects, and which setting said so (printed, so a user knows what was used). */
export type SubmitTarget =
  | { kind: "connectionString"; connectionString: string; endpoint: string; local: boolean; source: string }
  | { kind: "namespace"; fullyQualifiedNamespace: string; endpoint: string; local: boolean; source: string };

function flagError(flag: string, expected: string, got: string | undefined): UsageError {
  return new UsageError(`--${flag}: expected ${expected}, got ${got === undefined ? "nothing" : `"${got}"`}`);
}

const wholeNumber = /^\d+$/;
const queueName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,259}$/;
const prefixPattern = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const statusQueuePattern = /^[a-z0-9][a-z0-9._-]{0,259}$/;
const fractionSchema = z.coerce.number().min(0).max(1);

/** Parses the command line; throws UsageError naming the flag. Returns "help" for --help. */
export function parseSubmitArgs(
  argv: string[],
  statusQueuePrefix: string = DEFAULT_STATUS_QUEUE_PREFIX,
): SubmitArgs | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        count: { type: "string" },
        connection: { type: "string" },
        namespace: { type: "string" },
        queue: { type: "string" },
        prefix: { type: "string" },
        "reply-to": { type: "string" },
        "no-reply-to": { type: "boolean" },
        declined: { type: "string" },
        seed: { type: "string" },
        batch: { type: "boolean" },
        "no-batch": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    // node:util names the flag already ("Unknown option '--cont'", "Option '--count <value>' argument missing").
    throw new UsageError((error as Error).message);
  }
  if (values.help) return "help";

  const countText = values.count;
  if (countText === undefined || !wholeNumber.test(countText.trim())) {
    throw flagError("count", "a whole number of orders >= 1 (e.g. --count 10)", countText);
  }
  const count = Number(countText.trim());
  if (count < 1 || count > MAX_COUNT)
    throw flagError("count", `a whole number from 1 to ${MAX_COUNT}`, countText);

  const queue = values.queue ?? DEFAULT_QUEUE;
  if (!queueName.test(queue)) throw flagError("queue", "a Service Bus queue name", queue);

  const prefix = values.prefix ?? defaultOrderPrefix();
  if (!prefixPattern.test(prefix)) {
    throw flagError("prefix", "letters, digits, '-' or '_', starting with a letter or digit", prefix);
  }
  if (`${prefix}-${count}`.length > MAX_ORDER_ID_LENGTH) {
    throw flagError(
      "prefix",
      `a prefix short enough that "${prefix}-${count}" fits in 64 characters`,
      prefix,
    );
  }

  if (values["no-reply-to"] && values["reply-to"] !== undefined) {
    throw new UsageError("--reply-to and --no-reply-to: give one or the other");
  }
  const replyTo: string | null = values["no-reply-to"]
    ? null
    : (values["reply-to"] ?? DEFAULT_SAMPLE_REPLY_TO);
  if (
    replyTo !== null &&
    (!replyTo.startsWith(statusQueuePrefix) ||
      replyTo.length <= statusQueuePrefix.length ||
      !statusQueuePattern.test(replyTo))
  ) {
    throw flagError(
      "reply-to",
      `a lower-case status queue name starting with "${statusQueuePrefix}"`,
      replyTo,
    );
  }

  let declined = 0;
  if (values.declined !== undefined) {
    const parsed = fractionSchema.safeParse(values.declined.trim() === "" ? "x" : values.declined);
    if (!parsed.success) throw flagError("declined", "a fraction from 0 to 1 (e.g. 0.2)", values.declined);
    declined = parsed.data;
  }

  let seed: number | undefined;
  if (values.seed !== undefined) {
    if (!/^-?\d+$/.test(values.seed.trim())) throw flagError("seed", "a whole number", values.seed);
    seed = Number(values.seed.trim());
  }

  if (values.batch && values["no-batch"])
    throw new UsageError("--batch and --no-batch: give one or the other");

  if (values.connection !== undefined && values.namespace !== undefined) {
    throw new UsageError("--connection and --namespace: give one or the other");
  }
  if (values.connection !== undefined && values.connection.trim() === "") {
    throw flagError("connection", "a Service Bus connection string", values.connection);
  }
  if (values.namespace !== undefined && values.namespace.trim() === "") {
    throw flagError("namespace", "a fully qualified namespace such as myns.servicebus.windows.net", "");
  }

  return {
    count,
    queue,
    prefix,
    replyTo,
    declined,
    ...(seed !== undefined ? { seed } : {}),
    batch: !values["no-batch"],
    ...(values.connection !== undefined ? { connection: values.connection } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
  };
}

// ---- Where to connect ----

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
function statusQueuePrefixOf(env: NodeJS.ProcessEnv, cwd: string): string {
  for (const { values } of settingSources(env, cwd)) {
    if (values.STATUS_QUEUE_PREFIX) return values.STATUS_QUEUE_PREFIX;
  }
  return DEFAULT_STATUS_QUEUE_PREFIX;
}

async function createClient(target: SubmitTarget): Promise<ServiceBusClient> {
  const options = { retryOptions: SUBMIT_RETRY_OPTIONS };
  if (target.kind === "connectionString") return new ServiceBusClient(target.connectionString, options);
  // Loaded only when used: @azure/identity is large, and most runs talk to the emulator.
  const { DefaultAzureCredential } = await import("@azure/identity");
  return new ServiceBusClient(target.fullyQualifiedNamespace, new DefaultAzureCredential(), options);
}

// ---- Sending ----

export function orderMessage(order: Order): ServiceBusMessage {
  return { body: order, messageId: submissionMessageId(order), contentType: "application/json" };
}

interface Progress {
  sent: number;
  report(sent: number): void;
}

/** Every 100 (every 1000 past 2000 orders), so long runs show life without flooding short ones. */
function progressReporter(count: number, queue: string, log: (line: string) => void): Progress {
  const step = count > 2_000 ? 1_000 : 100;
  const progress: Progress = {
    sent: 0,
    report(sent: number) {
      const crossed = Math.floor(sent / step) > Math.floor(progress.sent / step);
      progress.sent = sent;
      if (crossed && sent < count) log(`  sent ${sent}/${count} to ${queue}`);
    },
  };
  return progress;
}

async function sendInBatches(
  sender: ServiceBusSender,
  orders: () => Iterable<Order>,
  progress: Progress,
): Promise<void> {
  let batch = await sender.createMessageBatch();
  for (const order of orders()) {
    const message = orderMessage(order);
    if (batch.tryAddMessage(message)) continue;
    if (batch.count === 0) throw new Error(`order ${order.orderId} is larger than a message batch may be`);
    await sender.sendMessages(batch);
    progress.report(progress.sent + batch.count);
    batch = await sender.createMessageBatch();
    if (!batch.tryAddMessage(message)) {
      throw new Error(`order ${order.orderId} is larger than a message batch may be`);
    }
  }
  if (batch.count > 0) {
    await sender.sendMessages(batch);
    progress.report(progress.sent + batch.count);
  }
}

async function sendOneByOne(
  sender: ServiceBusSender,
  orders: () => Iterable<Order>,
  progress: Progress,
): Promise<void> {
  for (const order of orders()) {
    await sender.sendMessages(orderMessage(order));
    progress.report(progress.sent + 1);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failure in words a user can act on: what went wrong, where, and what to try. */
export function describeSendFailure(error: unknown, target: SubmitTarget, queue: string): string {
  // The SDK's retries end in an AggregateError with an empty message; the last attempt's error says why.
  const cause = error instanceof AggregateError && error.errors.length > 0 ? error.errors.at(-1) : error;
  const err = (cause ?? {}) as { code?: unknown; name?: unknown };
  const message = errorText(cause);
  const where = `${target.endpoint} (from ${target.source})`;
  if (
    err.name === "CredentialUnavailableError" ||
    err.name === "AuthenticationError" ||
    err.name === "AggregateAuthenticationError"
  ) {
    return (
      `could not sign in to ${target.endpoint} with DefaultAzureCredential: ${message}\n` +
      "Sign in with `az login` or `azd auth login` (or set AZURE_TENANT_ID/AZURE_CLIENT_ID/AZURE_CLIENT_SECRET); " +
      "the identity needs the Azure Service Bus Data Sender role."
    );
  }
  if (err.code === "MessagingEntityNotFound") {
    return (
      `queue "${queue}" does not exist at ${where}: ${message}` +
      (target.local ? "\nThe emulator's queues are those of infra/servicebus-emulator.config.json." : "")
    );
  }
  if (err.code === "UnauthorizedAccess") {
    return (
      `access to queue "${queue}" at ${where} was refused: ${message}\n` +
      (target.kind === "namespace"
        ? "The signed-in identity needs the Azure Service Bus Data Sender role on the namespace or queue."
        : "Check SharedAccessKeyName and SharedAccessKey, and that the key may Send.")
    );
  }
  const unreachable =
    err.code === "ServiceCommunicationProblem" ||
    err.code === "ServiceTimeout" ||
    /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|timed out/i.test(message);
  if (unreachable) {
    return (
      `cannot reach Service Bus at ${where}: ${message}\n` +
      (target.local
        ? "Is `npm start` or `npm run emulators` running?"
        : "Check the namespace name, your network, and that AMQP (port 5671, or 443 over WebSockets) is allowed.")
    );
  }
  return `sending to queue "${queue}" at ${where} failed: ${message}`;
}

// ---- main ----

const consoleIo: SubmitIo = {
  log: (line) => console.log(line),
  error: (line) => console.error(line),
};

function listIds(ids: string[], max = 10): string {
  return ids.length <= max
    ? ids.join(", ")
    : `${ids.slice(0, max).join(", ")}, ... (${ids.length - max} more)`;
}

/** The CLI. Returns the exit code: 0 when every order was sent, 1 otherwise (with a message on io.error). */
export async function main(argv: string[], io: SubmitIo = consoleIo): Promise<number> {
  const env = io.env ?? process.env;
  const cwd = io.cwd ?? process.cwd();
  let args: SubmitArgs;
  let target: SubmitTarget;
  try {
    const parsed = parseSubmitArgs(argv, statusQueuePrefixOf(env, cwd));
    if (parsed === "help") {
      io.log(USAGE);
      return 0;
    }
    args = parsed;
    target = resolveTarget(args, env, cwd);
  } catch (error) {
    io.error(`submit: ${errorText(error)}`);
    if (error instanceof UsageError) io.error("Run with --help for usage.");
    return 1;
  }

  const random = args.seed !== undefined ? seededRandom(args.seed) : Math.random;
  const options: SampleOrderOptions = {
    prefix: args.prefix,
    replyTo: args.replyTo,
    random,
    declined: args.declined,
  };
  const declinedIds: string[] = [];
  // Generated as they are sent: a large --count never sits in memory whole.
  const orders = function* (): Iterable<Order> {
    for (let i = 1; i <= args.count; i++) {
      const order = sampleOrder(i, options);
      if (exceedsPaymentLimit(order)) declinedIds.push(order.orderId);
      yield order;
    }
  };

  io.log(
    `sending ${args.count} orders to ${args.queue} at ${target.endpoint} (connection from ${target.source}` +
      `${target.kind === "namespace" ? ", DefaultAzureCredential" : ""}${args.batch ? "" : ", one message per call"})`,
  );
  const progress = progressReporter(args.count, args.queue, io.log);
  const started = Date.now();
  let client: ServiceBusClient | undefined;
  try {
    client = await createClient(target);
    const sender = client.createSender(args.queue);
    await (args.batch ? sendInBatches : sendOneByOne)(sender, orders, progress);
    await sender.close();
  } catch (error) {
    io.error(`submit: ${describeSendFailure(error, target, args.queue)}`);
    if (progress.sent > 0) {
      io.error(
        `${progress.sent} of ${args.count} orders were sent before the failure; re-running with --prefix ${args.prefix}` +
          " is safe (the app takes a resent order as a no-op).",
      );
    }
    return 1;
  } finally {
    await client?.close().catch(() => undefined);
  }
  const elapsedMs = Date.now() - started;
  io.log(
    `sent ${args.count} orders to ${args.queue} (first ${args.prefix}-1, last ${args.prefix}-${args.count}) in ${elapsedMs} ms`,
  );
  if (declinedIds.length > 0) {
    io.log(
      `${declinedIds.length} of them exceed the payment limit of ${SAMPLE_PAYMENT_LIMIT}: the payment service will ` +
        `decline them and the workflow compensate them: ${listIds(declinedIds)}`,
    );
  }
  if (args.replyTo !== null) io.log(`status messages go to ${args.replyTo}`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(`submit: ${errorText(error)}`);
      process.exitCode = 1;
    },
  );
}
