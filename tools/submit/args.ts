/**
 * The submit CLI's command line: its usage text, and the parse that names the flag a mistake is in.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { DEFAULT_SAMPLE_REPLY_TO, SAMPLE_PAYMENT_LIMIT, defaultOrderPrefix } from "../sampleOrders";

export const DEFAULT_QUEUE = "orders";
export const DEFAULT_STATUS_QUEUE_PREFIX = "status-";
const MAX_COUNT = 1_000_000;
const MAX_ORDER_ID_LENGTH = 64;

export const USAGE = `Usage: npm run submit -- --count N [options]

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
