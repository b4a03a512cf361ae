import { alertSent } from "../domain";
import type { StateRecord } from "../domain";
import type { Logger } from "../telemetry/logger";
import type { Notifications } from "./notifications";
import type { StateStore } from "../store/stateStore";

/**
 * Sends the alert a record's last transition decided, under its stable MessageId, then marks it sent with a
 * conditional write. Called right after the deciding write, and by the Supervisor's sweep for alerts a crash left
 * unsent; the `alerts` queue's duplicate detection keeps a second send of one decision to one message.
 */
export async function sendDecidedAlert(
  deps: { states: StateStore; notifications: Notifications; now(): Date },
  log: Logger,
  record: StateRecord,
  by: "scheduler" | "supervisor",
): Promise<void> {
  const alert = record.alert;
  if (!alert || alert.sentAt !== null) return;
  await deps.notifications.alert(
    log,
    { kind: alert.kind, orderId: record.orderId, processState: record.processState, reason: alert.reason },
    { messageId: alert.messageId, at: alert.decidedAt },
  );
  const marked = await deps.states.apply(record.orderId, (r) =>
    alertSent(r, { now: deps.now(), messageId: alert.messageId, by }),
  );
  if (marked.kind === "refused")
    log.warn(`alert ${alert.messageId} sent; not marked: ${marked.refusal.reason}`);
}
