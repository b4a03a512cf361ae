import type { StateRecord } from "../stateRecord";
import { commit, refuse, unchanged, type TransitionResult } from "./result";

/**
 * How long an alert may stay unsent before the Supervisor's sweep sends it: the writer that decided it sends it
 * a moment later, so only one that died in between leaves it this long.
 */
export const ALERT_RESEND_AFTER_SECONDS = 10;

export interface AlertSentContext {
  now: Date;
  /** The MessageId the alert went out under: only that decision is marked. */
  messageId: string;
  /** Who sent it: the writer that decided it, or the Supervisor's sweep after that writer died. */
  by: "scheduler" | "supervisor";
}

/**
 * The decided alert is on the `alerts` queue. Not fenced: the order is terminal and unlocked by then. Marking an
 * alert that is already marked is a no-op; marking one the record no longer holds (an operator acted since) is
 * refused, and nothing is sent again for it.
 */
export function alertSent(record: StateRecord, ctx: AlertSentContext): TransitionResult {
  const alert = record.alert;
  if (!alert || alert.messageId !== ctx.messageId) {
    return refuse(record, "alertSent", "WrongState", `the record holds no alert ${ctx.messageId}`);
  }
  if (alert.sentAt !== null) return unchanged(record);
  return commit(record, ctx.now, { event: "alertSent", by: ctx.by, detail: alert.kind }, (draft) => {
    draft.alert!.sentAt = ctx.now.toISOString();
  });
}
