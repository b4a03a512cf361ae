import type { OrchestrationContext, Task } from "durable-functions";

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
 * The activities of `T`, for one orchestration: `const next = yield* activities.schedulerDispatchNext(input)`.
 * Calls are durable-functions `callActivity` tasks, so replay works as it does for hand-written calls.
 */
export function activityProxy<T extends Record<string, Activity>>(
  context: OrchestrationContext,
): ActivityProxy<T> {
  return new Proxy({} as ActivityProxy<T>, {
    get: (_target, name) =>
      function* call(input: unknown): Generator<Task, unknown, unknown> {
        return (yield context.df.callActivity(String(name), input)) as unknown;
      },
  });
}
