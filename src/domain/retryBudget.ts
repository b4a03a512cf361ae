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
 * deliveries × agent attempts. Durable activity retries are not a layer here: no activity calls a remote
 * service, and a re-sent request carries the same MessageId, which duplicate detection drops.
 */
export function computeRetryBudget(s: RetryBudgetSettings): RetryBudget {
  const attemptsPerStep = s.supervisorMaxFailures + 1;
  const maxCallsPerStep = s.agentMaxAttempts * s.agentRequestMaxDeliveryCount * attemptsPerStep;
  const withinBudget = maxCallsPerStep <= s.retryBudgetPerStep;
  const explanation =
    `${s.agentMaxAttempts} agent attempts (AGENT_MAX_ATTEMPTS) × ${s.agentRequestMaxDeliveryCount} deliveries ` +
    `(AGENT_REQUEST_MAX_DELIVERY_COUNT) × ${attemptsPerStep} Scheduler attempts (SUPERVISOR_MAX_FAILURES + 1) = ` +
    `${maxCallsPerStep} calls per step, ${withinBudget ? "within" : "over"} RETRY_BUDGET_PER_STEP=${s.retryBudgetPerStep}`;
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
