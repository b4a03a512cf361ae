import type { InvocationContext } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { capText, MAX_REASON_LENGTH, type Alert, type StateRecord, type StatusMessage } from "../domain";

type Status = StatusMessage["status"];

/**
 * Posts a status message to the submitter's private queue, if it gave one. Best effort by design: progress
 * reporting must never block or fail the order itself, so a failed post is logged, not thrown.
 */
export async function postStatus(
  deps: Dependencies,
  context: InvocationContext,
  record: StateRecord,
  status: Status,
  detail: string | null = null,
): Promise<void> {
  if (!record.replyTo) return;
  try {
    await deps.messaging.sendStatus(record.replyTo, {
      orderId: record.orderId,
      status,
      processState: record.processState,
      at: deps.now().toISOString(),
      detail,
    });
  } catch (error) {
    context.warn(`status ${status} for ${record.orderId} to ${record.replyTo} not sent: ${String(error)}`);
  }
}

/**
 * Raises an operator alert: an error-level log line with the orderId (for Application Insights alert rules) and
 * a message on the `alerts` queue, its reason at most MAX_REASON_LENGTH characters. Unlike status, an alert
 * that cannot be sent fails the caller, so that the message that caused it is retried rather than the alert lost.
 */
export async function raiseAlert(
  deps: Dependencies,
  context: InvocationContext,
  raised: Omit<Alert, "at">,
): Promise<void> {
  // One bound for every alert, whoever wrote the reason: Service Bus refuses large messages, people skim.
  const alert = { ...raised, reason: capText(raised.reason, MAX_REASON_LENGTH) };
  context.error(
    `ALERT ${alert.kind} order=${alert.orderId ?? "-"} state=${alert.processState ?? "-"}: ${alert.reason}`,
  );
  await deps.messaging.sendAlert({ ...alert, at: deps.now().toISOString() });
}
