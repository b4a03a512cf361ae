import { statusDetail } from "../domain/statusMessages";
import { boundedText, MAX_REASON_LENGTH, type Alert, type StateRecord, type StatusMessage } from "../domain";
import type { Logger } from "../telemetry/logger";
import { recordAlert } from "../telemetry/metrics";
import type { Messaging } from "./serviceBus";

type Status = StatusMessage["status"];

/**
 * What the app tells people: operator alerts and the submitter's status messages. Every role raises alerts
 * (submission, agents, the reply router, the Scheduler, the Supervisor); the Scheduler and the Supervisor post
 * status.
 */
export class Notifications {
  constructor(
    private readonly messaging: Messaging,
    private readonly now: () => Date,
  ) {}

  /**
   * Posts a status message to the submitter's private queue, if it gave one. Best effort by design: progress
   * reporting must never block or fail the order itself, so a failed post is logged, not thrown.
   */
  async status(
    log: Logger,
    record: StateRecord,
    status: Status,
    detail: string | null = null,
  ): Promise<void> {
    if (!record.replyTo) return;
    try {
      await this.messaging.sendStatus(
        record.replyTo,
        {
          orderId: record.orderId,
          status,
          processState: record.processState,
          at: this.now().toISOString(),
          detail: statusDetail(detail),
        },
        log,
      );
    } catch (error) {
      log.warn(`status ${status} for ${record.orderId} to ${record.replyTo} not sent: ${String(error)}`);
    }
  }

  /**
   * Raises an operator alert: an error-level log line with the orderId (for Application Insights alert rules) and
   * a message on the `alerts` queue, its reason at most MAX_REASON_LENGTH characters. Unlike status, an alert
   * that cannot be sent fails the caller, so that the message that caused it is retried rather than the alert lost.
   */
  async alert(
    log: Logger,
    raised: Omit<Alert, "at">,
    /** A stable MessageId and time, for an alert a record decided: a re-send is then the same message. */
    decided?: { messageId: string; at: string },
  ): Promise<void> {
    // One bound for every alert, whoever wrote the reason: Service Bus refuses large messages, people skim. And
    // one line: a reason quotes messages and remote services, whose text must not start lines of its own.
    const alert = { ...raised, reason: boundedText(raised.reason, MAX_REASON_LENGTH) };
    log.error(
      `ALERT ${alert.kind} order=${alert.orderId ?? "-"} state=${alert.processState ?? "-"}: ${alert.reason}`,
    );
    await this.messaging.sendAlert(
      { ...alert, at: decided?.at ?? this.now().toISOString() },
      decided?.messageId,
      log,
    );
    recordAlert(alert.kind);
  }
}
