import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import {
  CANCELLABLE_STATES,
  isoTimestamp,
  orderIdSchema,
  quoteValue,
  RETRYABLE_STATES,
  validateBody,
  type StateRecord,
  type TransitionResult,
} from "../domain";
import type { Logger } from "../telemetry/logger";
import type { RecordFilter, StateStore } from "../store/stateStore";
import { operatorDecision, operatorReason, RETRY_AFTER_SECONDS, type OperatorAction } from "./orders";
import { CONTINUATION_PATTERN, issueContinuation, readContinuation } from "./continuation";
import { auditName, type Principal } from "./principal";
import { json, problem, readJsonBody } from "./responses";

/** The states a bulk action may select: the ones its single-order transition starts from. */
export const BULK_STATES = {
  retry: RETRYABLE_STATES,
  cancel: CANCELLABLE_STATES,
} as const satisfies Record<OperatorAction, readonly string[]>;

/** Orders one call acts on: enough to make progress, few enough that a call stays far inside the front end's 230 s. */
export const BULK_LIMIT = { default: 500, max: 1000 } as const;

/** How many orderIds an answer names: enough for a person to spot-check, not a copy of the set. */
export const BULK_SAMPLE_SIZE = 20;

/** The grammar of the codes the app and the remote services put in lastError.code. */
export const ERROR_CODE_PATTERN = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

/** Writes of one call in flight at once: faster than one by one, gentle on the store's throughput. */
const WRITE_CONCURRENCY = 4;

/** toISOString's spelling, so that the store's text comparison of updatedAt is a comparison of times. */
const instant = isoTimestamp.transform((text) => new Date(text).toISOString());

const required = (issue: { input: unknown }, expected: string): string =>
  issue.input === undefined ? `required: ${expected}` : `${expected}, got ${quoteValue(issue.input)}`;

/** The body of POST /api/bulk/{action}, validated at the door: every refusal names the field. */
export function bulkActionBody(action: OperatorAction) {
  const states = BULK_STATES[action];
  const filter = z
    .strictObject(
      {
        state: z.enum(states, {
          error: (issue) => required(issue, `expected one of ${states.join(", ")} for a bulk ${action}`),
        }),
        errorCode: z
          .string({ error: "expected a string" })
          .regex(ERROR_CODE_PATTERN, {
            error: (issue) => required(issue, "expected a letter, then up to 63 letters or digits"),
          })
          .optional(),
        updatedSince: instant.optional(),
        updatedBefore: instant.optional(),
      },
      // Only the type: an unknown key keeps zod's own message, which names the key.
      {
        error: (issue) => (issue.code === "invalid_type" ? required(issue, "expected an object") : undefined),
      },
    )
    .refine((f) => !f.updatedSince || !f.updatedBefore || f.updatedSince < f.updatedBefore, {
      path: ["updatedBefore"],
      error: "expected a time after updatedSince",
    });
  return z.strictObject({
    filter,
    dryRun: z.boolean({ error: "expected true or false" }).default(false),
    reason: operatorReason,
    limit: z
      .int({ error: (issue) => required(issue, `expected a whole number from 1 to ${BULK_LIMIT.max}`) })
      .min(1, { error: `expected a whole number from 1 to ${BULK_LIMIT.max}` })
      .max(BULK_LIMIT.max, { error: `expected a whole number from 1 to ${BULK_LIMIT.max}` })
      .default(BULK_LIMIT.default),
    // Read with the paging keys by the handler (readContinuation), which a schema of the body does not hold.
    continuation: z
      .string({ error: "expected the continuation of a previous answer" })
      .describe("The continuation of the previous answer, as it gave it; any other token is a 400")
      .optional(),
  });
}
export type BulkActionBody = z.infer<ReturnType<typeof bulkActionBody>>;

const count = z.int().nonnegative();

/** What one call answers: the counts, a sample, and where to go on (the OpenAPI document is built from it). */
export const bulkAnswerSchema = z.strictObject({
  dryRun: z.boolean(),
  matched: count.describe("Orders matching the filter when the call began (a COUNT, not limited by `limit`)"),
  acted: count.describe("Orders this call moved, or on a dry run would have moved"),
  refused: count.describe(
    "Orders of this call's page that were not moved: refused by the transition, or changed since they were read",
  ),
  sample: z.array(orderIdSchema).max(BULK_SAMPLE_SIZE).describe("The first orders acted on"),
  continuation: z
    .string()
    .regex(CONTINUATION_PATTERN)
    .nullable()
    .describe(
      "Call again with this to go on after this call's page; null when no matching order is left after it",
    ),
  remaining: count.describe("Matching orders after this call's page: what the continuation still covers"),
});
export type BulkAnswer = z.infer<typeof bulkAnswerSchema>;

/**
 * The most Error orders a bulk retry may send back to Pending now: the room left under MAX_PENDING_BACKLOG, the
 * same bound the front door keeps with its 429. Other moves (to CompensationPending, or a cancel) do not grow the
 * Pending backlog and are bounded by `limit` alone. Orchestrations are bounded separately, by MAX_IN_FLIGHT in
 * the starter.
 */
export async function pendingRoom(
  deps: Pick<Dependencies, "config" | "states">,
  action: OperatorAction,
  body: Pick<BulkActionBody, "filter" | "dryRun" | "limit">,
): Promise<number> {
  if (action !== "retry" || body.filter.state !== "Error" || body.dryRun) return body.limit;
  const backlog = await deps.states.count(["Pending"]);
  return Math.min(body.limit, Math.max(0, deps.config.maxPendingBacklog - backlog));
}

/** The audit detail of each order a bulk action moves: that it was one, and the operator's reason. */
export const bulkDetail = (action: OperatorAction, reason: string | undefined): string =>
  `bulk ${action}` + (reason ? `: ${reason}` : "");

/** Runs `fn` over `items` with at most `concurrency` calls in flight; results in the order of `items`. */
async function mapLimited<T, R>(items: T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/**
 * Whether each record of a page was (or on a dry run would be) moved. A real run writes through
 * applyIfUnchanged: a record that changed since the page was read is counted as refused, never re-decided on the
 * fresh copy or overwritten, so a run never acts on what it did not select.
 */
function actOnPage(
  states: Pick<StateStore, "applyIfUnchanged">,
  page: StateRecord[],
  decide: (record: StateRecord) => TransitionResult,
  dryRun: boolean,
): Promise<boolean[]> {
  if (dryRun) return Promise.resolve(page.map((record) => decide(record).ok));
  return mapLimited(page, WRITE_CONCURRENCY, async (record) => {
    const outcome = await states.applyIfUnchanged(record, decide);
    return outcome.kind === "written";
  });
}

/**
 * POST /api/bulk/retry and /api/bulk/cancel, by a principal the caller has authorized: one page of the orders a
 * filter matches, each through the single-order transition, with the operator and reason in its audit trail. The
 * caller goes on with the continuation until it is null. `acted` tells the caller whether the starter has work.
 */
export async function bulkActionRequest(
  deps: Pick<Dependencies, "config" | "states" | "now">,
  log: Logger,
  request: HttpRequest,
  action: OperatorAction,
  principal: Principal,
): Promise<{ response: HttpResponseInit; acted: number }> {
  const read = await readJsonBody(request, deps.config.maxRequestBytes);
  if (!read.ok) return { response: read.response, acted: 0 };
  const parsed = validateBody(bulkActionBody(action), read.body);
  if (!parsed.ok) return { response: problem(400, parsed.message), acted: 0 };
  const body = parsed.value;
  const filter: RecordFilter = body.filter;
  const after =
    body.continuation === undefined ? undefined : readContinuation(body.continuation, deps.config.pagingKeys);
  if (after && !after.ok) return { response: problem(400, `continuation: ${after.error}`), acted: 0 };

  const room = await pendingRoom(deps, action, body);
  if (room === 0) {
    const error =
      `pending backlog is at MAX_PENDING_BACKLOG=${deps.config.maxPendingBacklog}: ` +
      "the starter is still working through it; call again with the same body later";
    return { response: json(429, { error }, { "retry-after": String(RETRY_AFTER_SECONDS) }), acted: 0 };
  }
  const [matched, page] = await Promise.all([
    deps.states.countMatching(filter),
    deps.states.list({ ...filter, limit: room, after: after?.value }),
  ]);
  const operator = auditName(principal);
  const decide = operatorDecision(action, {
    now: () => deps.now(),
    operator,
    reason: bulkDetail(action, body.reason),
  });
  const moved = await actOnPage(deps.states, page.items, decide, body.dryRun);
  const actedOn = page.items.filter((_, i) => moved[i]).map((r) => r.orderId);
  const answer: BulkAnswer = {
    dryRun: body.dryRun,
    matched,
    acted: actedOn.length,
    refused: page.items.length - actedOn.length,
    sample: actedOn.slice(0, BULK_SAMPLE_SIZE),
    continuation: page.next ? issueContinuation(page.next, deps.config.pagingKeys) : null,
    remaining: page.next ? await deps.states.countMatching(filter, page.next) : 0,
  };
  if (!body.dryRun) {
    log.log(
      `operator ${operator}: bulk ${action} of ${filter.state} orders: acted ${answer.acted}, ` +
        `refused ${answer.refused}, remaining ${answer.remaining}`,
    );
  }
  return { response: json(200, answer), acted: body.dryRun ? 0 : answer.acted };
}
