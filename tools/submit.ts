/**
 * `npm run submit -- --count N`: sends valid sample orders to the `orders` queue with the real
 * @azure/service-bus client, against the local emulator by default or any namespace. See docs/submit.md.
 */
import type { ServiceBusClient } from "@azure/service-bus";
import type { Order } from "../src/domain/order";
import {
  SAMPLE_PAYMENT_LIMIT,
  exceedsPaymentLimit,
  sampleOrder,
  type SampleOrderOptions,
} from "./sampleOrders";
import { seededRandom } from "./seededRandom";
import { USAGE, UsageError, parseSubmitArgs, type SubmitArgs } from "./submit/args";
import { describeSendFailure, errorText, progressReporter, sendInBatches, sendOneByOne } from "./submit/send";
import { createClient, resolveTarget, statusQueuePrefixOf, type SubmitTarget } from "./submit/target";

export interface SubmitIo {
  log(line: string): void;
  error(line: string): void;
  /** Where ServiceBusConnection and friends are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Folder holding local.settings(.sample).json; default process.cwd() (npm runs scripts in the project root). */
  cwd?: string;
}

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
