// Orchestrations exercising one durable feature each, written as for Azure. Names start with "F_" so they
// can be loaded next to the documentation samples.
import * as df from "durable-functions";

df.app.activity("F_Echo", { handler: (input: unknown) => input });

df.app.activity("F_Fail", {
  handler: (message: string) => {
    throw new Error(message);
  },
});

const failuresSoFar = new Map<string, number>();
/** Fails `failures` times per key, then returns the attempt number. */
df.app.activity("F_Flaky", {
  handler: (input: { key: string; failures: number }) => {
    const attempt = (failuresSoFar.get(input.key) ?? 0) + 1;
    failuresSoFar.set(input.key, attempt);
    if (attempt <= input.failures) throw new Error(`flaky ${input.key} attempt ${attempt}`);
    return attempt;
  },
});

/** Waits a durable timer of `ms`, reporting the orchestration time before and after. */
df.app.orchestration("F_Timer", function* (context) {
  const ms = context.df.getInput() as number;
  const before = context.df.currentUtcDateTime.toISOString();
  yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + ms));
  return { before, after: context.df.currentUtcDateTime.toISOString() };
});

/** Does some work, then collects three "Add" events (they may all arrive before it waits). */
df.app.orchestration("F_Events", function* (context) {
  yield context.df.callActivity("F_Echo", "warm-up");
  let sum = 0;
  for (let i = 0; i < 3; i++) sum += (yield context.df.waitForExternalEvent("Add")) as number;
  return sum;
});

/** Task.all over activities, then Task.any between an event and a one-hour timer. */
df.app.orchestration("F_AllAny", function* (context) {
  const all: number[] = yield context.df.Task.all([1, 2, 3].map((n) => context.df.callActivity("F_Echo", n)));
  const go = context.df.waitForExternalEvent("Go");
  const timeout = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60 * 60 * 1000));
  const winner = yield context.df.Task.any([go, timeout]);
  if (winner === go) {
    timeout.cancel();
    return { all, winner: "event", data: go.result as unknown };
  }
  return { all, winner: "timer", at: context.df.currentUtcDateTime.toISOString() };
});

/** Retries that run out: records what the caught error says. */
df.app.orchestration("F_RetryExhausted", function* (context) {
  const started = context.df.currentUtcDateTime.getTime();
  try {
    const options = new df.RetryOptions(1000, 3);
    options.backoffCoefficient = 2;
    yield context.df.callActivityWithRetry("F_Flaky", options, context.df.getInput());
    return { caught: null };
  } catch (err) {
    return {
      caught: (err as Error).message.split("\n")[0],
      elapsedMs: context.df.currentUtcDateTime.getTime() - started,
    };
  }
});

/** Sub-orchestrations: generated and explicit child ids, a failing child, and a child retried until it works. */
df.app.orchestration("F_Parent", function* (context) {
  const a: unknown = yield context.df.callSubOrchestrator("F_Child", { echo: "a" });
  const b: unknown = yield context.df.callSubOrchestrator(
    "F_Child",
    { echo: "b" },
    `${context.df.instanceId}-fixed`,
  );
  let failed: string | null = null;
  try {
    yield context.df.callSubOrchestrator("F_Child", { fail: "child broke" });
  } catch (err) {
    failed = (err as Error).message;
  }
  const retried: unknown = yield context.df.callSubOrchestratorWithRetry(
    "F_Child",
    new df.RetryOptions(500, 3),
    { flaky: { key: `${context.df.instanceId}-child`, failures: 1 } },
  );
  return { a, b, failed, retried };
});

df.app.orchestration("F_Child", function* (context) {
  const input = context.df.getInput() as {
    echo?: string;
    fail?: string;
    flaky?: { key: string; failures: number };
  };
  if (input.fail) yield context.df.callActivity("F_Fail", input.fail);
  if (input.flaky) return yield context.df.callActivity("F_Flaky", input.flaky);
  return { echoed: yield context.df.callActivity("F_Echo", input.echo), parent: context.df.parentInstanceId };
});

/** Eternal-style loop: one minute timer per round, continueAsNew until the count reaches 3. */
df.app.orchestration("F_Loop", function* (context) {
  const n = (context.df.getInput() as number | undefined) ?? 0;
  yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60 * 1000));
  if (n < 3) {
    context.df.continueAsNew(n + 1);
    return undefined;
  }
  return `finished after ${n} restarts`;
});

/** Custom status through the stages of a workflow. */
df.app.orchestration("F_CustomStatus", function* (context) {
  context.df.setCustomStatus({ stage: "waiting for approval" });
  const approver: string = yield context.df.waitForExternalEvent("Approve");
  context.df.setCustomStatus({ stage: "approved", by: approver });
  yield context.df.callActivity("F_Echo", approver);
  return "done";
});

/** Replays differently from its first run: the first episode is not what a replay does. */
const firstRuns = new Set<string>();
df.app.orchestration("F_NonDeterministic", function* (context) {
  const firstRun = !firstRuns.has(context.df.instanceId);
  firstRuns.add(context.df.instanceId);
  yield context.df.callActivity("F_Echo", firstRun ? "first run" : "replay");
  return "unreachable on a replay";
});

/** Throws from orchestrator code after a step. */
df.app.orchestration("F_Throws", function* (context) {
  yield context.df.callActivity("F_Echo", 1);
  throw new Error("orchestrator exploded");
});

/** Lets an activity failure escape. */
df.app.orchestration("F_ActivityFails", function* (context) {
  yield context.df.callActivity("F_Fail", "activity exploded");
});

/** A ten-day timer: longer than the six-day maximum, so schema V3 splits it into pieces. */
df.app.orchestration("F_LongTimer", function* (context) {
  const start = context.df.currentUtcDateTime;
  yield context.df.createTimer(new Date(start.getTime() + 10 * 24 * 60 * 60 * 1000));
  return { start: start.toISOString(), end: context.df.currentUtcDateTime.toISOString() };
});

/** Deterministic APIs: newGuid and currentUtcDateTime are stable across replays. */
df.app.orchestration("F_Deterministic", function* (context) {
  const guid = context.df.newGuid(context.df.instanceId);
  const t1 = context.df.currentUtcDateTime.toISOString();
  const echoed: string = yield context.df.callActivity("F_Echo", guid);
  return { guid, echoed, t1, replayingAtEnd: context.df.isReplaying };
});

/** Waits for an event forever (for terminate / status / purge tests). */
df.app.orchestration("F_WaitForever", function* (context) {
  return yield context.df.waitForExternalEvent("Never");
});

/** Signals then calls an entity, and catches an entity operation that throws. */
df.app.entity("F_Account", (context) => {
  const balance = context.df.getState(() => 0) as number;
  const amount = context.df.getInput() as number;
  switch (context.df.operationName) {
    case "deposit":
      context.df.setState(balance + amount);
      break;
    case "withdraw":
      if (amount > balance) throw new Error("insufficient funds");
      context.df.setState(balance - amount);
      break;
    case "balance":
      context.df.return(balance);
      break;
    case "forward":
      // entity-to-entity signal
      context.df.signalEntity(new df.EntityId("F_Account", "savings"), "deposit", amount);
      break;
    case "delete":
      context.df.destructOnExit();
      break;
  }
});

df.app.orchestration("F_Bank", function* (context) {
  const checking = new df.EntityId("F_Account", "checking");
  context.df.signalEntity(checking, "deposit", 100);
  yield context.df.callEntity(checking, "withdraw", 30);
  let refused: string | null = null;
  try {
    yield context.df.callEntity(checking, "withdraw", 1000);
  } catch {
    refused = "refused";
  }
  yield context.df.callEntity(checking, "forward", 5);
  return { balance: (yield context.df.callEntity(checking, "balance")) as number, refused };
});

/** Fan-out of slow activities, measuring how many run at once. */
export const concurrency = { current: 0, max: 0 };
df.app.activity("F_Slow", {
  handler: async (i: number) => {
    concurrency.current++;
    concurrency.max = Math.max(concurrency.max, concurrency.current);
    await new Promise((resolve) => setTimeout(resolve, 10));
    concurrency.current--;
    return i;
  },
});

df.app.orchestration("F_FanOutSlow", function* (context) {
  const n = context.df.getInput() as number;
  const results: number[] = yield context.df.Task.all(
    Array.from({ length: n }, (_, i) => context.df.callActivity("F_Slow", i)),
  );
  return results.reduce((a, b) => a + b, 0);
});
