// The app the kill-and-restart test runs in a child process. Every activity appends "start"/"end" lines
// (with the process id) to the file named by DURABLE_KILL_LOG, so the test can see which activities a
// SIGKILL interrupted and that they ran again.
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import * as df from "durable-functions";

const logPath = process.env.DURABLE_KILL_LOG ?? "";
const record = (line: string): void => {
  if (logPath) fs.appendFileSync(logPath, `${line}\n`);
};

df.app.activity("K_Step", {
  handler: async (key: string) => {
    record(`start ${key} ${process.pid}`);
    await sleep(60 + Math.floor(Math.random() * 120));
    record(`end ${key} ${process.pid}`);
    return `done ${key}`;
  },
});

df.app.orchestration("K_Workflow", function* (context) {
  const id = context.df.instanceId;
  const steps: string[] = [];
  for (let i = 0; i < 3; i++) steps.push(yield context.df.callActivity("K_Step", `${id}/seq${i}`));
  yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 300));
  const fan: string[] = yield context.df.Task.all(
    [0, 1, 2].map((j) => context.df.callActivity("K_Step", `${id}/fan${j}`)),
  );
  const go: unknown = yield context.df.waitForExternalEvent("Go");
  const child: string = yield context.df.callSubOrchestrator("K_Child", id);
  const tally: number = yield context.df.callEntity(new df.EntityId("K_Tally", "all"), "add", 1);
  return { steps, fan, go, child, tallied: tally > 0 };
});

df.app.orchestration("K_Child", function* (context) {
  return yield context.df.callActivity("K_Step", `${context.df.getInput() as string}/child`);
});

df.app.entity("K_Tally", (context) => {
  const count = context.df.getState(() => 0) as number;
  if (context.df.operationName === "add") {
    context.df.setState(count + (context.df.getInput() as number));
    context.df.return(count + 1);
  }
});
