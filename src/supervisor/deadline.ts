import type { Dependencies } from "../app/dependencies";
import { deadlineMessageSchema, ORDER_ID_PATTERN, validateBody, type ProcessState } from "../domain";
import type { Logger } from "../telemetry/logger";
import { annotate } from "../telemetry/tracing";
import { expireAttempt } from "./sweep";

export type DeadlineOutcome =
  /** The attempt was still waiting on that step: the Supervisor decided (back to Pending, or Error, ...). */
  | { kind: "expired"; processState: ProcessState }
  /** The record moved on (answered, reclaimed, finished) or its deadline was moved: nothing to decide. */
  | { kind: "movedOn"; reason: string }
  /** Not a deadline notice of this app: alerted (on the first delivery) and to be set aside with the reason. */
  | { kind: "invalid"; reason: string };

/**
 * The Supervisor's recovery index: a notice from the `deadlines` queue that one step of one attempt passed its
 * completeBy unanswered. It acts on exactly that record, with one point read and the sweep's own fenced decision
 * (expireAttempt), so the work per expired step is the same whatever the size of the state store, and an
 * expired step is decided at its deadline, not at the next sweep. No lease is needed: the decision is a
 * conditional write fenced by the attempt's lockedBy, so the sweep and a notice racing for one record cannot both
 * act. The periodic sweep stays as the safety net for attempts whose orchestration never ran to its deadline (a
 * claim whose start was lost, a notice that was never sent).
 */
export async function handleDeadline(
  deps: Pick<Dependencies, "config" | "states" | "notifications" | "infraFaults" | "now">,
  log: Logger,
  message: unknown,
  options: { alert: boolean } = { alert: true },
): Promise<DeadlineOutcome> {
  const parsed = validateBody(deadlineMessageSchema, message);
  if (!parsed.ok) {
    const reason = `deadlines: ${parsed.message}`;
    const orderId = (message as { orderId?: unknown } | null)?.orderId;
    if (options.alert)
      await deps.notifications.alert(log, {
        kind: "InvalidMessage",
        orderId: typeof orderId === "string" && ORDER_ID_PATTERN.test(orderId) ? orderId : null,
        processState: null,
        reason,
      });
    else log.warn(`${reason} (alerted on the first delivery)`);
    return { kind: "invalid", reason: parsed.message };
  }
  const notice = parsed.value;
  const record = await deps.states.get(notice.orderId);
  if (!record) return { kind: "movedOn", reason: `no state record for ${notice.orderId}` };
  if (record.lockedBy !== notice.instanceId)
    return { kind: "movedOn", reason: `held by ${record.lockedBy ?? "nobody"}, not ${notice.instanceId}` };
  const now = deps.now();
  if (record.completeBy === null || record.completeBy > now.toISOString())
    return {
      kind: "movedOn",
      reason: `completeBy is ${record.completeBy ?? "none"} (the attempt went on past ${notice.completeBy})`,
    };
  const state = await expireAttempt(deps, log, record, notice.instanceId, now, "deadline");
  annotate(log, { "sas.decision": state ?? "none" });
  if (state === undefined) return { kind: "movedOn", reason: "the record changed while deciding" };
  log.log(
    `supervisor: ${notice.instanceId} step ${notice.stepIndex} ${notice.kind} passed ${notice.completeBy}: ${state}`,
  );
  return { kind: "expired", processState: state };
}
