import type { Dependencies } from "../app/dependencies";
import { orderSchema, type Order, type OrderDocument } from "../domain";
import type { Logger } from "../telemetry/logger";
import { recordSubmission } from "../submission/submit";
import { SUBMISSION_CHECK } from "./submissionCheck";

export interface SubmissionCheckReport {
  /** Order documents looked at. */
  checked: number;
  /** Of those, the ones that had no state record and now have one. */
  completed: number;
  /** Where the check now stands (submittedAt), or undefined when it did not move. */
  checkedUpTo: string | undefined;
}

/** The order as submitted, from its document: the document's own fields and the store's are not the order's. */
function orderOf(document: OrderDocument): Order | undefined {
  const fields = Object.fromEntries(
    Object.entries(document).filter(
      ([key]) => !key.startsWith("_") && key !== "id" && key !== "fingerprint" && key !== "submittedAt",
    ),
  );
  const parsed = orderSchema.safeParse(fields);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The Supervisor's check that every stored order was submitted. An order document is written before its state
 * record (by the front door, or by the `orders` queue's submission), and the two share no transaction: a front door
 * whose send to `orders` failed after the document landed (its client may never send again), or a submission that
 * kept failing, leaves a document that nothing would ever pick up. Each sweep pages through the documents
 * submitted since its checkpoint, up to GRACE_SECONDS ago (the time the queue's own path takes, put-backs
 * included, is far less), and creates the state record of any that has none, as the queue would have: the order
 * is then claimed like any other. Nothing is done twice: the state record's create is keyed by orderId.
 */
export async function checkSubmissions(
  deps: Pick<
    Dependencies,
    "config" | "orders" | "states" | "workflows" | "notifications" | "submissionsChecked" | "now"
  >,
  log: Logger,
): Promise<SubmissionCheckReport> {
  const now = deps.now();
  const upTo = new Date(now.getTime() - SUBMISSION_CHECK.graceSeconds * 1000).toISOString();
  const saved = await deps.submissionsChecked.read();
  // The first check ever looks back as far as the Supervisor's window.
  const from =
    saved?.value ?? new Date(now.getTime() - deps.config.supervisorWindowHours * 3_600_000).toISOString();
  const report: SubmissionCheckReport = { checked: 0, completed: 0, checkedUpTo: undefined };
  if (from >= upTo) return report;

  let continuation: string | undefined;
  let lastSeen = from;
  let pages = 0;
  do {
    const page = await deps.orders.submittedBetween(from, upTo, deps.config.supervisorPageSize, continuation);
    pages++;
    const recorded = await deps.states.existing(page.items.map((item) => item.orderId));
    for (const item of page.items) {
      report.checked++;
      lastSeen = item.submittedAt;
      if (recorded.has(item.orderId)) continue;
      const document = await deps.orders.get(item.orderId);
      const order = document && orderOf(document);
      if (!order) {
        log.warn(
          `supervisor: order document ${item.orderId} has no state record and is not a valid order; skipped`,
        );
        continue;
      }
      const outcome = await recordSubmission(deps, log, order, (alert) =>
        deps.notifications.alert(log, alert),
      );
      if (outcome.kind === "accepted" && outcome.created) {
        report.completed++;
        log.warn(
          `supervisor: order ${order.orderId} was stored but never submitted; its state record is created now`,
        );
      }
    }
    continuation = page.continuation;
  } while (continuation && pages < SUBMISSION_CHECK.maxPages);

  // Stopped mid-way, the next check starts just before the last document seen: documents that share its
  // submittedAt are looked at again rather than skipped.
  const stepBack = new Date(Date.parse(lastSeen) - 1).toISOString();
  const reached = continuation ? (stepBack > from ? stepBack : lastSeen) : upTo;
  if (reached > from && (await deps.submissionsChecked.write(reached, saved?.etag)))
    report.checkedUpTo = reached;
  return report;
}
