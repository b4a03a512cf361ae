import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { schedulerActivities, type SchedulerDependencies } from "../scheduler/activities";
import { SCHEDULER_ORCHESTRATION, schedulerOrchestration } from "../scheduler/orchestration";
import type { Logger } from "../services/logger";

type AnyActivity = (deps: SchedulerDependencies, log: Logger, input: never) => Promise<unknown>;

/** The Scheduler's orchestration, and each of its activities under the name the orchestration calls it by. */
df.app.orchestration(SCHEDULER_ORCHESTRATION, schedulerOrchestration);
for (const [name, activity] of Object.entries<AnyActivity>(schedulerActivities)) {
  // The input is what the orchestration passed through the typed proxy, which checked it against this activity.
  df.app.activity(name, {
    handler: (input: unknown, context) => activity(dependencies(), context, input as never),
  });
}
