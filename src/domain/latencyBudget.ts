/**
 * How long one step, and one claim, can take in Azure, hop by hop: what STEP_TIMEOUT_SECONDS and
 * CLAIM_TIMEOUT_SECONDS must leave room for there. The figures are worst cases from the platform's documentation
 * (each hop names its source); docs/deployment.md shows the table this module renders, and a test holds the Azure
 * defaults in infra/main.bicep to it. Locally every hop is instant, which is why the local defaults are shorter.
 */

import { ACTIVITY_RETRY_WAIT_MS } from "./retryBudget";

/** How the remote-service client backs off between attempts (remote/remoteService.ts uses these). */
export const AGENT_BACKOFF = { initialMs: 200, maxMs: 2_000 } as const;

/** Documented worst cases of the hops the app cannot shorten itself, in seconds. */
export const AZURE_HOP_SECONDS = {
  /**
   * A Service Bus message from send to a warm trigger's handler: the extension keeps a receive pending, so the
   * message is delivered as soon as it is committed (typically tens of milliseconds; one second is the margin).
   */
  serviceBusDelivery: 1,
  /** raiseEvent through the durable client: one call to the extension's HTTP API, which enqueues the event. */
  raiseEvent: 1,
  /**
   * A function group with no instance, or all of them busy, scaling out: the scale controller adds instances for
   * non-HTTP triggers at most once every 30 seconds (Azure Functions event-driven scaling).
   */
  scaleOut: 30,
} as const;

export interface LatencyBudgetSettings {
  agentMaxAttempts: number;
  agentAttemptTimeoutSeconds: number;
  /**
   * The Durable Azure Storage backend's maxQueuePollingInterval (host.json), the longest a message waits in a
   * control or work-item queue before an idle worker polls it; 0 for the Durable Task Scheduler, which pushes
   * work to its workers.
   */
  queuePollingSeconds: number;
}

export interface LatencyHop {
  hop: string;
  seconds: number;
  /** Where the figure comes from. */
  source: string;
  /** Only when a function group has to scale out (no always-ready instance, or a burst beyond it). */
  whenScaling?: boolean;
}

export interface LatencyBudget {
  hops: LatencyHop[];
  /** Every group warm. */
  warmSeconds: number;
  /** One group scaling out on the way. */
  scalingSeconds: number;
}

function budgetOf(hops: LatencyHop[]): LatencyBudget {
  const sum = (list: LatencyHop[]) => list.reduce((total, h) => total + h.seconds, 0);
  return {
    hops,
    warmSeconds: sum(hops.filter((h) => !h.whenScaling)),
    scalingSeconds: sum(hops),
  };
}

const scaleOutHop = (group: string): LatencyHop => ({
  hop: `${group} scales out`,
  seconds: AZURE_HOP_SECONDS.scaleOut,
  source: "Functions event-driven scaling: non-HTTP triggers add an instance at most every 30 s",
  whenScaling: true,
});

/**
 * From the moment a dispatch sets the step's completeBy (the claim's for the first step, the reply path's for each
 * later one) to the moment the step's answer is recorded: what must fit inside STEP_TIMEOUT_SECONDS. The answer
 * counts once recorded: only the attempt's end is raised on the orchestration, which otherwise finds each answer on
 * the record when its timer fires (reportDeadline), so no raise and no pick-up is in the budget.
 */
export function stepLatencyBudget(s: LatencyBudgetSettings): LatencyBudget {
  const backoffs = Math.max(0, s.agentMaxAttempts - 1);
  return budgetOf([
    {
      hop: "first step only: the orchestration started before its request is sent",
      seconds: AZURE_HOP_SECONDS.raiseEvent,
      source: "durable client (the starter starts the attempt, then sends the request)",
    },
    {
      hop: "dispatch retried after a transient store or bus error",
      seconds: ACTIVITY_RETRY_WAIT_MS / 1000,
      source:
        "ACTIVITY_RETRY (src/domain/retryBudget.ts); the reply path's put-back waits less (2.5 s at most the first time)",
    },
    {
      hop: "request delivered to the agent",
      seconds: AZURE_HOP_SECONDS.serviceBusDelivery,
      source: "Service Bus trigger, warm",
    },
    {
      hop: `agent's calls: ${s.agentMaxAttempts} × ${s.agentAttemptTimeoutSeconds} s + ${backoffs} back-off(s) ≤ ${AGENT_BACKOFF.maxMs / 1000} s`,
      seconds: s.agentMaxAttempts * s.agentAttemptTimeoutSeconds + (backoffs * AGENT_BACKOFF.maxMs) / 1000,
      source: "AGENT_MAX_ATTEMPTS, AGENT_ATTEMPT_TIMEOUT_SECONDS",
    },
    {
      hop: "reply delivered to agentReplies, which records it",
      seconds: AZURE_HOP_SECONDS.serviceBusDelivery,
      source: "Service Bus trigger, warm",
    },
    scaleOutHop("an agent or agentReplies"),
  ]);
}

/**
 * From the starter's claim (completeBy = now + CLAIM_TIMEOUT_SECONDS) to the first dispatch, which sets the step's
 * own deadline: what must fit inside CLAIM_TIMEOUT_SECONDS. Only a claim written alone waits for the dispatch
 * activity (a workflow version this build lacks, or nothing left to undo); a claim that dispatches the first step
 * itself starts that step's deadline at once, and the orchestration's start then falls inside STEP_TIMEOUT_SECONDS.
 */
export function claimLatencyBudget(s: LatencyBudgetSettings): LatencyBudget {
  return budgetOf([
    { hop: "orchestration started", seconds: AZURE_HOP_SECONDS.raiseEvent, source: "durable client" },
    {
      hop: "orchestration picks the start up",
      seconds: s.queuePollingSeconds,
      source: "host.json durableTask.storageProvider.maxQueuePollingInterval",
    },
    {
      hop: "dispatch activity picked up",
      seconds: s.queuePollingSeconds,
      source: "host.json durableTask.storageProvider.maxQueuePollingInterval",
    },
    scaleOutHop("the durable group"),
  ]);
}

/** The budget as a Markdown table, for docs/deployment.md. */
export function renderLatencyBudget(title: string, budget: LatencyBudget): string {
  const rows = budget.hops.map(
    (h) => `| ${h.hop}${h.whenScaling ? " (only when scaling)" : ""} | ${h.seconds} s | ${h.source} |`,
  );
  return [
    `| ${title} | worst case | source |`,
    "| --- | --- | --- |",
    ...rows,
    `| **all groups warm** | **${budget.warmSeconds} s** | |`,
    `| **one group scaling out** | **${budget.scalingSeconds} s** | |`,
  ].join("\n");
}
