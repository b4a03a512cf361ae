/**
 * Sending the orders: in batches or one by one, progress on long runs, and a failure in words a user can act on.
 */
import type { ServiceBusMessage, ServiceBusSender } from "@azure/service-bus";
import { submissionMessageId, type Order } from "../../src/domain/order";
import type { SubmitTarget } from "./target";

export function orderMessage(order: Order): ServiceBusMessage {
  return { body: order, messageId: submissionMessageId(order), contentType: "application/json" };
}

export interface Progress {
  sent: number;
  report(sent: number): void;
}

/** Every 100 (every 1000 past 2000 orders), so long runs show life without flooding short ones. */
export function progressReporter(count: number, queue: string, log: (line: string) => void): Progress {
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

export async function sendInBatches(
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

export async function sendOneByOne(
  sender: ServiceBusSender,
  orders: () => Iterable<Order>,
  progress: Progress,
): Promise<void> {
  for (const order of orders()) {
    await sender.sendMessages(orderMessage(order));
    progress.report(progress.sent + 1);
  }
}

export function errorText(error: unknown): string {
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
