import type { Dependencies } from "../app/dependencies";
import type { AppConfig } from "../config";
import {
  acceptResubmission,
  ORDER_ID_PATTERN,
  replyToProblem,
  orderSchema,
  submit,
  validateBody,
  type Order,
  type StateRecord,
} from "../domain";
import type { Logger } from "../telemetry/logger";
import type { Notifications } from "../messaging/notifications";
import { annotate, spanOf, traceparentOf } from "../telemetry/tracing";

export type SubmissionOutcome =
  | { kind: "accepted"; created: boolean; record: StateRecord }
  | { kind: "invalid"; reason: string }
  | { kind: "conflict"; reason: string };

/** Validation shared by the queue and the front door: the schema, then the replyTo policy. */
export function validateOrder(
  body: unknown,
  config: Pick<AppConfig, "statusQueuePrefix" | "statusQueues">,
): { ok: true; order: Order } | { ok: false; reason: string } {
  const parsed = validateBody(orderSchema, body);
  if (!parsed.ok) return { ok: false, reason: parsed.message };
  const { replyTo } = parsed.value;
  const problem = replyTo === undefined ? undefined : replyToProblem(replyTo, config);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, order: parsed.value };
}

/**
 * Submission: writes the orders container and the state store, each idempotently keyed by orderId. The two
 * writes share no transaction, so each is safe to repeat: a crash between them leaves the message unsettled,
 * and its redelivery finds the order document (same fingerprint), creates the missing state record, and goes
 * on. Different data under a known orderId is a conflict, never an overwrite.
 */
export async function submitOrder(
  deps: Pick<Dependencies, "config" | "orders" | "states" | "workflows" | "notifications" | "now">,
  log: Logger,
  message: unknown,
  options: { alert: boolean } = { alert: true },
): Promise<SubmissionOutcome> {
  const alert = async (raised: Parameters<Notifications["alert"]>[1]) => {
    if (options.alert) await deps.notifications.alert(log, raised);
    else
      log.warn(
        `${raised.kind} for ${raised.orderId ?? "-"} (already alerted on the first delivery): ${raised.reason}`,
      );
  };
  const checked = validateOrder(message, deps.config);
  const orderId = (message as { orderId?: unknown } | null)?.orderId;
  if (!checked.ok) {
    await alert({
      kind: "InvalidOrder",
      orderId: typeof orderId === "string" && ORDER_ID_PATTERN.test(orderId) ? orderId : null,
      processState: null,
      reason: checked.reason,
    });
    return { kind: "invalid", reason: checked.reason };
  }
  const order = checked.order;
  const now = deps.now();
  const document = await deps.orders.ensure(order, now);
  if (document.kind === "conflict") {
    const reason = `order ${order.orderId} was already submitted with different data`;
    await alert({
      kind: "OrderConflict",
      orderId: order.orderId,
      processState: null,
      reason,
    });
    return { kind: "conflict", reason };
  }
  return recordSubmission(deps, log, order, alert);
}

/**
 * The second half of a submission, once the order document is stored: the state record, created if missing, and
 * the submitter's "received". The `orders` queue's submission runs it, and so does the Supervisor's sweep for an
 * order document that has no record (src/supervisor/submissions.ts).
 */
export async function recordSubmission(
  deps: Pick<Dependencies, "states" | "workflows" | "notifications" | "now">,
  log: Logger,
  order: Order,
  alert: (raised: Parameters<Notifications["alert"]>[1]) => Promise<void>,
): Promise<SubmissionOutcome> {
  // The order's trace is the one this submission runs in: every attempt of it joins it from the record.
  const { created, record } = await deps.states.create(
    submit(order, {
      now: deps.now(),
      workflow: deps.workflows.latest("order"),
      traceparent: traceparentOf(spanOf(log)),
    }),
  );
  annotate(log, { "sas.order_id": order.orderId, "sas.submission": created ? "created" : "known" });
  if (!created) {
    const same = acceptResubmission(record, order);
    if (!same.ok) {
      await alert({
        kind: "OrderConflict",
        orderId: order.orderId,
        processState: record.processState,
        reason: same.refusal.reason,
      });
      return { kind: "conflict", reason: same.refusal.reason };
    }
  }
  // A redelivery after a crash may not have posted it yet; a duplicate "received" is harmless.
  if (record.processState === "Pending" && record.attempt === 0)
    await deps.notifications.status(log, record, "received");
  return { kind: "accepted", created, record };
}
