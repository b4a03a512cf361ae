import type { InvocationContext } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { boundedText, MAX_REASON_LENGTH } from "../domain";
import type { RejectedMessage } from "../messaging/serviceBus";

/**
 * What a trigger does with a message that can never be accepted (invalid, conflicting, or answering no request):
 * it sets the message aside on the rejected-messages queue, with the reason in its application properties, and
 * returns, so the host completes the original. Throwing instead would fail the invocation on every delivery (the
 * function-failure alert fires MaxDeliveryCount times per bad message) and leave a dead letter that says only
 * MaxDeliveryCountExceeded. A Node.js function cannot dead-letter its own trigger message with a reason of its own
 * on every platform: that needs the host's settlement service (docs/deployment.md, "Rejected messages").
 *
 * The forwarded copy's MessageId is derived from the original's sequence number, and the rejected-messages queue
 * detects duplicates, so a redelivery after a crash between the forward and the completion sets nothing aside
 * twice.
 */
export async function setAsideRejected(
  deps: Pick<Dependencies, "messaging" | "setAsideBodies" | "now">,
  context: InvocationContext,
  sourceQueue: string,
  body: unknown,
  rejection: { reason: string; description: string },
): Promise<void> {
  const metadata = context.triggerMetadata ?? {};
  // The reasons are built from escaped parts already; escaping again is a no-op that keeps this sink safe alone.
  const description = boundedText(rejection.description, MAX_REASON_LENGTH);
  const rejected: RejectedMessage = {
    sourceQueue,
    body,
    originalMessageId: textOf(metadata.messageId) ?? context.invocationId,
    originalSequenceNumber:
      metadata.sequenceNumber === undefined || metadata.sequenceNumber === null
        ? undefined
        : String(metadata.sequenceNumber as string | number),
    originalContentType: textOf(metadata.contentType),
    originalEnqueuedTimeUtc: textOf(metadata.enqueuedTimeUtc),
    deliveryCount: Number(metadata.deliveryCount ?? 1),
    reason: rejection.reason,
    description,
  };
  await deps.messaging.sendRejected(
    rejected,
    (copyKey, bytes) =>
      deps.setAsideBodies.keep(
        copyKey,
        bytes,
        {
          sourceQueue,
          originalMessageId: rejected.originalMessageId,
          originalContentType: rejected.originalContentType,
        },
        deps.now(),
      ),
    context,
  );
  // The MessageId is the producer's text: kept as it is in the properties, escaped in the log line.
  context.warn(
    `${sourceQueue}: message ${boundedText(rejected.originalMessageId, 128)} set aside on rejected-messages: ` +
      `${rejection.reason}: ${description}`,
  );
}

function textOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** True on a message's first delivery, when its alert is due; later deliveries only log. */
export function isFirstDelivery(context: InvocationContext): boolean {
  return Number(context.triggerMetadata?.deliveryCount ?? 1) <= 1;
}
