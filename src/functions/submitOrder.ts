import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { startAttemptWith } from "../scheduler/startAttempt";
import { claimAndStart } from "../scheduler/starter";
import { submitOrder } from "../submission/submit";

/**
 * Thrown for a message that can never be accepted (invalid or conflicting). A Node.js function cannot
 * dead-letter the message it was triggered by (that needs the preview SDK-binding extension), so it fails the
 * invocation: the host abandons the message and Service Bus dead-letters it at MaxDeliveryCount. The operator
 * alert with the real reason (InvalidOrder / OrderConflict) goes out on the first delivery.
 */
export class RejectedMessageError extends Error {
  override name = "RejectedMessageError";
}

export async function submitOrderHandler(message: unknown, context: InvocationContext): Promise<void> {
  const deps = dependencies();
  const deliveryCount = Number(context.triggerMetadata?.deliveryCount ?? 1);
  const outcome = await submitOrder(deps, context, message, { alert: deliveryCount <= 1 });
  if (outcome.kind !== "accepted") throw new RejectedMessageError(`${outcome.kind}: ${outcome.reason}`);
  context.log(`order ${outcome.record.orderId} ${outcome.created ? "accepted" : "already accepted"}`);
  if (outcome.created) {
    // Fast path: an idle system starts the order now instead of at the next starter tick.
    const client = df.getClient(context);
    await claimAndStart(deps, context, startAttemptWith(client), `fast:${context.invocationId}`);
  }
}

app.serviceBusQueue("submitOrder", {
  connection: "ServiceBusConnection",
  queueName: "orders",
  extraInputs: [df.input.durableClient()],
  handler: submitOrderHandler,
});
