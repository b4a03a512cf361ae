import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { freesPlace, schedulerActivities, type SchedulerDependencies } from "../scheduler/activities";
import { startAttemptWith } from "../scheduler/durableClient";
import { requestClaimRound } from "../scheduler/starter";
import { SCHEDULER_ORCHESTRATION, schedulerOrchestration } from "../scheduler/orchestration";
import type { Logger } from "../telemetry/logger";
import { tracedActivity } from "./traced";

type AnyActivity = (
  deps: SchedulerDependencies,
  log: Logger,
  input: never,
) => Promise<Parameters<typeof freesPlace>[0] | void>;

/**
 * Hands the place an attempt has just freed (its write gave the place back to its admission shard) to the next
 * due order: a claim round now, coalesced per process, which looks in that shard first. Best effort: should it fail, the starter's timer claims
 * the order a little later, so the activity's own outcome, already written, is returned either way.
 */
async function handOver(context: InvocationContext): Promise<void> {
  try {
    await requestClaimRound(dependencies(), context, startAttemptWith(df.getClient(context)));
  } catch (error) {
    context.warn(
      `handover: claim round failed (${String(error)}); the starter's timer claims the next order`,
    );
  }
}

/** The Scheduler's orchestration, and each of its activities under the name the orchestration calls it by. */
df.app.orchestration(SCHEDULER_ORCHESTRATION, schedulerOrchestration);
for (const [name, activity] of Object.entries<AnyActivity>(schedulerActivities)) {
  // The input is what the orchestration passed through the typed proxy, which checked it against this activity.
  df.app.activity(name, {
    extraInputs: [df.input.durableClient()],
    handler: tracedActivity(name, async (input: unknown, context) => {
      const outcome = await activity(dependencies(), context, input as never);
      if (outcome && freesPlace(outcome)) await handOver(context);
      return outcome;
    }),
  });
}
