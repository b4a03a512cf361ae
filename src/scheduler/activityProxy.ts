import { RetryOptions, type OrchestrationContext, type Task } from "durable-functions";
import { ACTIVITY_RETRY } from "../domain";

/** An activity as the app defines it: its dependencies, a logger, its input; a promise of its result. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the definitions' own types are taken apart below
type Activity = (deps: any, log: any, input: any) => Promise<unknown>;

/**
 * What an orchestration sees of a set of activities: one call per name, taking that activity's input and, used
 * with `yield*`, giving back its result type. Names and types come from the definitions themselves, as Temporal's
 * `proxyActivities<typeof activities>()` does, so an orchestration can neither misspell a name nor misread a
 * result; the one cast from the durable SDK's untyped result is here.
 */
export type ActivityProxy<T extends Record<string, Activity>> = {
  [K in keyof T]: (input: Parameters<T[K]>[2]) => Generator<Task, Awaited<ReturnType<T[K]>>, unknown>;
};

/**
 * The retry every activity call gets (ACTIVITY_RETRY). The activities are idempotent (fenced, conditional writes;
 * a re-sent request keeps its MessageId), so a transient Cosmos DB or Service Bus error, such as the 403s while a
 * fresh deployment's role assignments propagate, is retried inside the attempt instead of costing a Supervisor
 * retry. The host runs the retries as durable timers, so they replay like any other task.
 */
function activityRetryOptions(): RetryOptions {
  const options = new RetryOptions(ACTIVITY_RETRY.firstRetryIntervalMs, ACTIVITY_RETRY.maxAttempts);
  options.backoffCoefficient = ACTIVITY_RETRY.backoffCoefficient;
  options.maxRetryIntervalInMilliseconds = ACTIVITY_RETRY.maxRetryIntervalMs;
  return options;
}

/**
 * The activities of `T`, for one orchestration: `const next = yield* activities.schedulerDispatchNext(input)`.
 * Calls are durable-functions `callActivityWithRetry` tasks, so replay works as it does for hand-written calls.
 */
export function activityProxy<T extends Record<string, Activity>>(
  context: OrchestrationContext,
): ActivityProxy<T> {
  const retry = activityRetryOptions();
  return new Proxy({} as ActivityProxy<T>, {
    get: (_target, name) =>
      function* call(input: unknown): Generator<Task, unknown, unknown> {
        return (yield context.df.callActivityWithRetry(String(name), retry, input)) as unknown;
      },
  });
}
