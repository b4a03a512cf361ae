import { createHash } from "node:crypto";
import type { InvocationContext } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { describeInfraError, infraPartOf, isTransientInfraError } from "../resilience/infraResilience";

/**
 * A queue trigger's message that met a fault of the app's own store or bus (past the retries inside each call:
 * resilience/infraResilience.ts) is put back on its queue for later, not abandoned. Abandoned, the broker would
 * redeliver it at once, five times in well under a second, and then dead-letter it with
 * MaxDeliveryCountExceeded: a few seconds of 503s would lose an accepted order. The copy is scheduled after a
 * growing delay and carries how often it was put back; the original is then completed. Should the bus refuse the
 * copy too, the error goes up and the broker's own redelivery is what is left.
 *
 * Every handler behind this is safe to run again for the same message (the submission's writes are idempotent by
 * orderId, an agent's call by its idempotency key, a reply and a deadline notice are checked against the record).
 */

/** Delay before the n-th put-back (1-based): 2 s doubling up to a minute, so a long outage costs a message a minute. */
export function rescheduleDelaySeconds(n: number, random: () => number = Math.random): number {
  const base = Math.min(RESCHEDULE.maxDelaySeconds, RESCHEDULE.firstDelaySeconds * 2 ** (n - 1));
  return base * (0.75 + random() * 0.5);
}

export const RESCHEDULE = {
  firstDelaySeconds: 2,
  maxDelaySeconds: 60,
  /** Application properties of a put-back copy (lower case: the Functions library camel-cases received keys). */
  countProperty: "rescheduled",
  originalIdProperty: "rescheduledfrom",
} as const;

/** Service Bus limits a MessageId to 128 characters. */
const MAX_MESSAGE_ID = 128;

const textOf = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined;

/** Wraps a queue trigger's handler: a transient infrastructure fault puts the message back instead of failing it. */
export function rescheduleOnInfraFault(
  queue: string,
  handler: (message: unknown, context: InvocationContext) => Promise<void>,
  deps: () => Pick<Dependencies, "messaging" | "infraFaults" | "now">,
): (message: unknown, context: InvocationContext) => Promise<void> {
  return async (message, context) => {
    try {
      await handler(message, context);
    } catch (error) {
      if (!isTransientInfraError(error)) throw error;
      const part = infraPartOf(error);
      if (part) deps().infraFaults.note(part, error);
      await putBack(deps(), context, queue, message, error);
    }
  };
}

async function putBack(
  deps: Pick<Dependencies, "messaging" | "now">,
  context: InvocationContext,
  queue: string,
  message: unknown,
  cause: unknown,
): Promise<void> {
  const metadata = context.triggerMetadata ?? {};
  const properties = (metadata.applicationProperties ?? {}) as Record<string, unknown>;
  const before = Number(properties[RESCHEDULE.countProperty] ?? 0);
  const n = (Number.isSafeInteger(before) && before >= 0 ? before : 0) + 1;
  const originalId =
    textOf(properties[RESCHEDULE.originalIdProperty]) ?? textOf(metadata.messageId) ?? context.invocationId;
  const key = `${originalId}:r${n}`;
  const delay = rescheduleDelaySeconds(n);
  const at = new Date(deps.now().getTime() + delay * 1000);
  await deps.messaging.send(
    queue,
    {
      body: message,
      // One copy per put-back even if this invocation is itself redelivered after a crash (duplicate detection).
      messageId:
        key.length <= MAX_MESSAGE_ID ? key : `sha256:${createHash("sha256").update(key).digest("hex")}`,
      ...(textOf(metadata.correlationId) ? { correlationId: textOf(metadata.correlationId)! } : {}),
      ...(textOf(metadata.subject) ? { subject: textOf(metadata.subject)! } : {}),
      ...(textOf(metadata.contentType) ? { contentType: textOf(metadata.contentType)! } : {}),
      applicationProperties: { [RESCHEDULE.countProperty]: n, [RESCHEDULE.originalIdProperty]: originalId },
      scheduledEnqueueTimeUtc: at,
    },
    context,
  );
  context.warn(
    `${queue}: message ${originalId} put back until ${at.toISOString()} (time ${n}): ${describeInfraError(cause)}`,
  );
}
