import type { StatusMessage } from "./messages";
import type { HistoryEntry, StateRecord } from "./stateRecord";
import { boundedText, MAX_REASON_LENGTH } from "./validation";

/**
 * A status message's detail as it leaves the app: it quotes a remote service's error (its code and message, any
 * text the service chose), so it gets the alert's treatment: escaped, one line, at most MAX_REASON_LENGTH.
 */
export function statusDetail(text: string | null): string | null {
  return text === null ? null : boundedText(text, MAX_REASON_LENGTH);
}

/**
 * The status messages an order's submitter was sent, derived from the audit trail. Statuses are posted best
 * effort right after the transitions below and are not stored anywhere, so the trail is the record of them: each
 * rule mirrors a postStatus call in src/submission and src/scheduler or src/supervisor. `at` is the transition's
 * time (the message follows it by milliseconds) and `detail` what the trail knows. The trail is bounded
 * (HISTORY_LIMIT), so for a long-lived order the oldest messages fall out of it with their entries; an order
 * without replyTo was sent nothing.
 */
export function statusMessagesFromHistory(record: StateRecord): StatusMessage[] {
  if (!record.replyTo) return [];
  const messages: StatusMessage[] = [];
  const send = (entry: HistoryEntry, status: StatusMessage["status"], detail: string | null = null): void => {
    messages.push({
      orderId: record.orderId,
      status,
      processState: entry.to,
      at: entry.at,
      detail: statusDetail(detail),
    });
  };
  let previous: HistoryEntry | undefined;
  for (const [i, entry] of record.history.entries()) {
    const afterClaim = previous?.event === "claimed";
    previous = entry;
    const next = record.history[i + 1];
    switch (entry.event) {
      case "submitted":
        send(entry, "received");
        break;
      case "stepDispatched":
      case "compensationStepDispatched":
        // An attempt's first dispatch, right after its claim, announces that work (or undo) has started.
        if (afterClaim) {
          const status = entry.event === "stepDispatched" ? "processing" : "compensating";
          send(entry, status, `attempt ${entry.attempt}, ${entry.detail ?? ""}`);
        }
        break;
      case "stepSucceeded":
        // The last step's success and "processed" are one write, and one message: "processed".
        if (next?.event !== "processed" || next.at !== entry.at)
          send(entry, "stepSucceeded", entry.detail ?? null);
        break;
      case "processed":
        send(entry, "processed");
        break;
      case "stepFailedPermanent":
        // With nothing to undo the refusal ends the order at once: Compensated.
        send(entry, entry.to === "Compensated" ? "compensated" : "compensating", entry.detail ?? null);
        break;
      case "compensated":
        send(entry, "compensated");
        break;
      case "compensationStepFailed":
        // Only a permanent undo failure ends in CompensationFailed; a transient one leaves it to the Supervisor.
        if (entry.to === "CompensationFailed") send(entry, "compensationFailed", entry.detail ?? null);
        break;
      case "retriesExhausted":
        send(entry, entry.to === "Error" ? "failed" : "compensationFailed", entry.detail ?? null);
        break;
    }
  }
  return messages;
}
