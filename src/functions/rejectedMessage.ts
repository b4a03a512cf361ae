import type { InvocationContext } from "@azure/functions";

/**
 * Thrown for a message that can never be accepted (invalid, conflicting, or answering no request). A Node.js
 * function cannot dead-letter the message it was triggered by (that needs the preview SDK-binding extension), so
 * it fails the invocation: the host abandons the message and Service Bus dead-letters it at MaxDeliveryCount,
 * where it stays as evidence. The operator alert with the real reason goes out on the first delivery only.
 */
export class RejectedMessageError extends Error {
  override name = "RejectedMessageError";
}

/** True on a message's first delivery, when its alert is due; later deliveries only log. */
export function isFirstDelivery(context: InvocationContext): boolean {
  return Number(context.triggerMetadata?.deliveryCount ?? 1) <= 1;
}
