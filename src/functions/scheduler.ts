import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { freesPlace, schedulerActivities, type SchedulerDependencies } from "../scheduler/activities";
import { SCHEDULER_ORCHESTRATION, schedulerOrchestration } from "../scheduler/orchestration";
import type { Logger } from "../telemetry/logger";
import { handOver } from "./handOver";
import { tracedActivity } from "./traced";

type AnyActivity = (
  deps: SchedulerDependencies,
  log: Logger,
  input: never,
) => Promise<Parameters<typeof freesPlace>[0]>;

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
