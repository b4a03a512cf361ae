import type { Dependencies } from "../app/dependencies";
import {
  ADMISSION,
  BREAKER,
  claim,
  claimAndDispatch,
  deferForOutage,
  isSuspect,
  nextStepIndex,
  nextUndoIndex,
  outageOutlasted,
  unavailableUntil,
  type AgentName,
  type BreakerRecord,
  type StateRecord,
} from "../domain";
import type { Logger } from "../telemetry/logger";
import { contextOf, inSpan, SpanKind, spanLogger, traceparentOf } from "../telemetry/tracing";
import { announceAttempt, sendDispatchedRequest } from "./activities";
import type { SchedulerInput } from "./orchestration";
import { RoundCoalescer } from "./roundCoalescer";

/**
 * Starts the orchestration of a claimed attempt (the durable client's startNew, in the app), with the trace
 * context its activities continue (null: none) and the first move when the claim recorded and sent it.
 */
export type StartAttempt = (
  instanceId: string,
  orderId: string,
  traceparent: string | null,
  dispatched?: SchedulerInput["dispatched"],
) => Promise<void>;

export interface StarterReport {
  /** Free places the round found (at most ADMISSION.claimsPerRound). */
  capacity: number;
  claimed: number;
  started: number;
  skipped: number;
  /** Due, but not claimed: the service their next step needs is unavailable (its breaker open). */
  deferred: number;
}

/** The service an order's next move (step or undo) calls; undefined when nothing is left to call. */
function nextService(record: StateRecord): AgentName | undefined {
  const index = record.processState === "CompensationPending" ? nextUndoIndex(record) : nextStepIndex(record);
  return index === -1 ? undefined : record.steps[index]?.agent;
}

/**
 * Claims due Pending / CompensationPending records, oldest first, and starts one orchestration per claim, never
 * letting Processing + Compensating exceed MAX_IN_FLIGHT (admission control towards the remote services). Each
 * claim first takes a place in an admission shard (src/coordination/admissionShards.ts): rounds on any number of instances
 * run at once, and a place can be spent once only, since it is taken by conditional write before the record is.
 * A claim that does not land gives its place back. A claim whose start is lost (crash between claim and startNew)
 * keeps its place until the Supervisor expires it at its claim deadline, and that write gives it back.
 *
 * Admission control also spares the remote services: an order whose next step needs a service whose shared breaker
 * is open is not claimed (that attempt would fail fast) but deferred to the probe time; when the probe time comes,
 * one order per service is claimed to make the probe and the others wait for its outcome. An order that has waited
 * longer than OUTAGE_MAX_SECONDS is claimed anyway, so its attempt fails and counts.
 */
export async function claimAndStart(
  deps: Pick<
    Dependencies,
    | "config"
    | "states"
    | "admission"
    | "breaker"
    | "now"
    | "workflows"
    | "orders"
    | "messaging"
    | "notifications"
  >,
  log: Logger,
  start: StartAttempt,
): Promise<StarterReport> {
  const report: StarterReport = { capacity: 0, claimed: 0, started: 0, skipped: 0, deferred: 0 };
  const rooms = await deps.admission.findRoom(ADMISSION.claimsPerRound, log);
  report.capacity = Math.min(
    ADMISSION.claimsPerRound,
    rooms.reduce((sum, room) => sum + room.free, 0),
  );
  if (report.capacity === 0) return report;
  const now = deps.now();
  const due = await deps.states.findClaimable(now, report.capacity);
  const probers = await chooseProbers(deps, due.items, now);
  const toClaim: StateRecord[] = [];
  for (const record of due.items) {
    const wait = await waitForService(deps, record, now, probers);
    if (!wait) {
      toClaim.push(record);
      continue;
    }
    const deferred = await deps.states.applyIfUnchanged(record, (r) =>
      deferForOutage(r, {
        now,
        until: wait.until,
        service: wait.service,
        outageMaxSeconds: deps.config.outageMaxSeconds,
      }),
    );
    if (deferred.kind === "written") report.deferred++;
    else report.skipped++;
  }
  const placed = await deps.admission.take(rooms, toClaim);
  report.skipped += toClaim.length - placed.length;
  const notLanded = new Map<number, string[]>();
  // Each claim is its own record, place and request: they go out together, as the attempts' activities would.
  await Promise.all(
    placed.map(async ({ record, shard, ticket }) => {
      const claimed = await claimOne(deps, log, record, now, shard);
      if (!claimed) {
        report.skipped++;
        notLanded.set(shard, [...(notLanded.get(shard) ?? []), ticket]);
        return;
      }
      report.claimed++;
      const instanceId = claimed.record.lockedBy!;
      try {
        // In the order's trace: the attempt's activities are children of this span.
        await inSpan(
          "start attempt",
          {
            kind: SpanKind.PRODUCER,
            parent: contextOf(record.traceparent),
            from: log,
            attributes: { "sas.order_id": record.orderId, "sas.instance_id": instanceId },
          },
          async (span) => {
            const first = claimed.dispatched ? firstMove(claimed.record) : undefined;
            // The orchestration exists before its request goes out: an answer raised to an instance that does not
            // exist yet would be refused, and the attempt would wait for its deadline.
            await start(instanceId, record.orderId, traceparentOf(span), first);
            // Under this span too: the first request is the attempt's first hop.
            if (first) await sendFirstMove(deps, spanLogger(log, span), claimed.record, first);
          },
        );
        report.started++;
      } catch (error) {
        log.warn(
          `starter: claimed ${instanceId} but could not start it (${String(error)}); the Supervisor recovers it`,
        );
      }
    }),
  );
  // Another claimer took these records first: their places go back now (or, should that fail, at their check).
  await Promise.all([...notLanded].map(([shard, tickets]) => deps.admission.giveBack(shard, { tickets })));
  if (report.claimed > 0 || report.deferred > 0)
    log.log(
      `starter: claimed ${report.claimed}, started ${report.started}, capacity ${report.capacity}` +
        (report.deferred > 0 ? `, deferred ${report.deferred} (service unavailable)` : ""),
    );
  return report;
}

/**
 * Claims one record: with its first dispatch in the same write when this build has its workflow (the orchestration's
 * first activity then has nothing to do), else the claim alone, and the orchestration's first activity dispatches
 * (or, for a workflow this build does not have, alerts). Undefined when another writer moved the record first.
 */
async function claimOne(
  deps: Pick<Dependencies, "config" | "states" | "workflows">,
  log: Logger,
  record: StateRecord,
  now: Date,
  admissionShard: number,
): Promise<{ record: StateRecord; dispatched: boolean } | undefined> {
  const ctx = { now, claimTimeoutSeconds: deps.config.claimTimeoutSeconds, admissionShard };
  const known = deps.workflows.get(record.workflow) !== undefined;
  const outcome = await deps.states.applyIfUnchanged(record, (r) =>
    known
      ? claimAndDispatch(r, { ...ctx, stepTimeoutSeconds: deps.config.stepTimeoutSeconds })
      : claim(r, ctx),
  );
  if (outcome.kind !== "written") return undefined;
  const last = outcome.record.history.at(-1)?.event;
  return {
    record: outcome.record,
    dispatched: last === "stepDispatched" || last === "compensationStepDispatched",
  };
}

/** The move a claim's write dispatched, as the orchestration waits for it. */
function firstMove(written: StateRecord): NonNullable<SchedulerInput["dispatched"]> {
  const forward = written.processState === "Processing";
  return {
    stepIndex: forward ? nextStepIndex(written) : nextUndoIndex(written),
    direction: forward ? "do" : "undo",
    completeBy: written.completeBy!,
  };
}

/**
 * Sends the request the claim recorded and tells the submitter the attempt started. A send that fails leaves the
 * step unanswered: its deadline passes and the Supervisor decides, as for a request lost on the way.
 */
async function sendFirstMove(
  deps: Pick<Dependencies, "workflows" | "orders" | "messaging" | "notifications">,
  log: Logger,
  written: StateRecord,
  move: NonNullable<SchedulerInput["dispatched"]>,
): Promise<void> {
  const workflow = deps.workflows.get(written.workflow)!;
  try {
    await sendDispatchedRequest(deps, log, written, workflow, move.stepIndex, move.direction);
    await announceAttempt(deps, log, written, move.stepIndex);
  } catch (error) {
    log.warn(
      `starter: ${written.lockedBy} claimed and started, its first request not sent (${String(error)}); ` +
        `the Supervisor decides at its deadline, ${move.completeBy}`,
    );
  }
}

const rounds = new RoundCoalescer<StarterReport>();

/**
 * A claim round as the functions ask for one (the timer, each new submission, an operator's retry, a hand-over):
 * while this process runs one, an ask makes it run once more and returns at once (undefined): rounds of one
 * process would only compete for the same places and records.
 */
export function requestClaimRound(
  deps: Parameters<typeof claimAndStart>[0],
  log: Logger,
  start: StartAttempt,
): Promise<StarterReport | undefined> {
  return rounds.run(() => claimAndStart(deps, log, start));
}

/** The services whose breaker is due for its probe, with the one due order of each that makes it. */
type Probers = Map<AgentName, string>;

/**
 * For each service whose breaker is due for a probe, the due order that makes it: one whose calls have not failed
 * on that service in this outage if there is one (its answer says most about the service: a few orders whose own
 * requests fail can open the circuit, and they would only fail the probe again), then the one with the fewest
 * failures (a failed probe counts against the order that made it, and the orders that first ran into the outage
 * have already paid), then the oldest.
 */
async function chooseProbers(
  deps: Pick<Dependencies, "breaker">,
  due: readonly StateRecord[],
  now: Date,
): Promise<Probers> {
  const best = new Map<AgentName, StateRecord>();
  for (const record of due) {
    const service = nextService(record);
    if (!service) continue;
    const breaker = await deps.breaker(service).current();
    if (breaker.state === "closed" || unavailableUntil(breaker, now) !== null) continue;
    const current = best.get(service);
    if (!current || betterProber(breaker, record, current)) best.set(service, record);
  }
  return new Map([...best].map(([service, record]) => [service, record.orderId]));
}

/** Is `a` the better prober? Not suspected first, then fewer failures; on a tie the one found first (older). */
function betterProber(breaker: BreakerRecord, a: StateRecord, b: StateRecord): boolean {
  const suspectA = isSuspect(breaker, a.orderId);
  if (suspectA !== isSuspect(breaker, b.orderId)) return !suspectA;
  const failures = (r: StateRecord) =>
    r.processState === "CompensationPending" ? r.compensationFailureCount : r.failureCount;
  return failures(a) < failures(b);
}

/**
 * Whether `record` must wait for its next service, and until when: while the breaker refuses calls, or, when it
 * is due for its probe, unless this order makes it (the others wait a call's timeout for the probe's outcome).
 */
async function waitForService(
  deps: Pick<Dependencies, "config" | "breaker">,
  record: StateRecord,
  now: Date,
  probers: Probers,
): Promise<{ service: AgentName; until: Date } | undefined> {
  const service = nextService(record);
  if (!service || outageOutlasted(record, now, deps.config.outageMaxSeconds)) return undefined;
  const breaker = deps.breaker(service);
  const until = await breaker.unavailableUntil();
  if (until) return { service, until };
  const prober = probers.get(service);
  if (prober === undefined || prober === record.orderId) return undefined;
  const probeWindow = (deps.config.agentAttemptTimeoutSeconds + BREAKER.probeMarginSeconds) * 1000;
  return { service, until: new Date(now.getTime() + probeWindow) };
}
