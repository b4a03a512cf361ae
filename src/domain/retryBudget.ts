/**
 * How the Scheduler retries a failed activity inside an attempt: 3 tries, 1 s then 2 s apart, 3 s of waiting in
 * all (ACTIVITY_RETRY_WAIT_MS), which the step's latency budget counts. Activities call no remote service, so
 * these retries add no remote calls: a retried dispatch re-sends its request under the same MessageId, which the
 * request queue's duplicate detection drops.
 */
export const ACTIVITY_RETRY = {
  maxAttempts: 3,
  firstRetryIntervalMs: 1_000,
  backoffCoefficient: 2,
  maxRetryIntervalMs: 4_000,
} as const;

/** The waits between an activity call's tries, in order: each the last times the coefficient, capped. */
export const ACTIVITY_RETRY_INTERVALS_MS: readonly number[] = Array.from(
  { length: ACTIVITY_RETRY.maxAttempts - 1 },
  (_, i) =>
    Math.min(
      ACTIVITY_RETRY.firstRetryIntervalMs * ACTIVITY_RETRY.backoffCoefficient ** i,
      ACTIVITY_RETRY.maxRetryIntervalMs,
    ),
);

/** The longest an activity call waits between its tries in all. */
export const ACTIVITY_RETRY_WAIT_MS = ACTIVITY_RETRY_INTERVALS_MS.reduce((a, b) => a + b, 0);

/** The settings that multiply into the number of calls one step can make to its remote service. */
export interface RetryBudgetSettings {
  /** Calls an agent makes for one delivered request (cockatiel retries included). */
  agentMaxAttempts: number;
  /** Deliveries of one request message (the *-requests queues' MaxDeliveryCount). */
  agentRequestMaxDeliveryCount: number;
  /** Failed attempts the Supervisor retries before Error; attempts = this + 1. */
  supervisorMaxFailures: number;
  retryBudgetPerStep: number;
}

export interface RetryBudget {
  callsPerDelivery: number;
  deliveriesPerAttempt: number;
  attemptsPerStep: number;
  maxCallsPerStep: number;
  budget: number;
  withinBudget: boolean;
  /** The product spelled out, for logs and start-up errors. */
  explanation: string;
}

/**
 * Worst case calls for one step and one direction (do or undo; they have separate idempotency keys and separate
 * failure counts). Each layer retries independently, so the limits multiply: Scheduler attempts × Service Bus
 * deliveries × agent attempts. Durable activity retries (ACTIVITY_RETRY) are not a factor: no activity calls a
 * remote service, and a re-sent request carries the same MessageId, which duplicate detection drops.
 */
export function computeRetryBudget(s: RetryBudgetSettings): RetryBudget {
  const attemptsPerStep = s.supervisorMaxFailures + 1;
  const maxCallsPerStep = s.agentMaxAttempts * s.agentRequestMaxDeliveryCount * attemptsPerStep;
  const withinBudget = maxCallsPerStep <= s.retryBudgetPerStep;
  const explanation =
    `${s.agentMaxAttempts} agent attempts (AGENT_MAX_ATTEMPTS) × ${s.agentRequestMaxDeliveryCount} deliveries ` +
    `(AGENT_REQUEST_MAX_DELIVERY_COUNT) × ${attemptsPerStep} Scheduler attempts (SUPERVISOR_MAX_FAILURES + 1) = ` +
    `${maxCallsPerStep} calls per step, ${withinBudget ? "within" : "over"} RETRY_BUDGET_PER_STEP=${s.retryBudgetPerStep} ` +
    `(activity retries re-send under the same MessageId: no extra calls)`;
  return {
    callsPerDelivery: s.agentMaxAttempts,
    deliveriesPerAttempt: s.agentRequestMaxDeliveryCount,
    attemptsPerStep,
    maxCallsPerStep,
    budget: s.retryBudgetPerStep,
    withinBudget,
    explanation,
  };
}
