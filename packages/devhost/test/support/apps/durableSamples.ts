// The durable-functions documentation samples, written as an app for Azure (Node.js v4 model). Only the
// outside world is local: "SMS" goes to an in-memory outbox and "blob storage" is a directory.
import fs from "node:fs";
import path from "node:path";
import { app, type HttpRequest, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";

// ---- Function chaining (E1_HelloSequence) ----
df.app.orchestration("E1_HelloSequence", function* (context) {
  const output: string[] = [];
  output.push(yield context.df.callActivity("E1_SayHello", "Tokyo"));
  output.push(yield context.df.callActivity("E1_SayHello", "Seattle"));
  output.push(yield context.df.callActivity("E1_SayHello", "London"));
  return output;
});

df.app.activity("E1_SayHello", {
  handler: (name: string) => `Hello ${name}!`,
});

// ---- Fan-out/fan-in (E2_BackupSiteContent): back up every file under a directory, return the bytes copied ----
df.app.orchestration("E2_BackupSiteContent", function* (context) {
  const rootDirectory = context.df.getInput() as string;
  if (!rootDirectory) throw new Error("A directory path is required as an input.");
  const files: string[] = yield context.df.callActivity("E2_GetFileList", rootDirectory);
  const tasks = files.map((file) => context.df.callActivity("E2_CopyFileToBlob", { rootDirectory, file }));
  const results: number[] = yield context.df.Task.all(tasks);
  return results.reduce((sum, bytes) => sum + bytes, 0);
});

df.app.activity("E2_GetFileList", {
  handler: (rootDirectory: string) =>
    (fs.readdirSync(rootDirectory, { recursive: true }) as string[])
      .map((f) => path.join(rootDirectory, f))
      .filter((f) => fs.statSync(f).isFile()),
});

df.app.activity("E2_CopyFileToBlob", {
  handler: (input: { rootDirectory: string; file: string }) => {
    const blob = path.join(`${input.rootDirectory}.backup`, path.relative(input.rootDirectory, input.file));
    fs.mkdirSync(path.dirname(blob), { recursive: true });
    fs.copyFileSync(input.file, blob);
    return fs.statSync(blob).size;
  },
});

// ---- Human interaction (E4_SmsPhoneVerification): 90 s to answer with the code, at most 4 tries ----
export const smsOutbox: Array<{ phoneNumber: string; code: number }> = [];

df.app.orchestration("E4_SmsPhoneVerification", function* (context) {
  const phoneNumber = context.df.getInput() as string;
  if (!phoneNumber) throw new Error("A phone number input is required.");
  const challengeCode: number = yield context.df.callActivity("E4_SendSmsChallenge", phoneNumber);
  // The user has 90 seconds to respond with the code they received in the SMS message.
  const expiration = new Date(context.df.currentUtcDateTime.getTime() + 90 * 1000);
  const timeoutTask = context.df.createTimer(expiration);
  let authorized = false;
  for (let retryCount = 0; retryCount <= 3; retryCount++) {
    const challengeResponseTask = context.df.waitForExternalEvent("SmsChallengeResponse");
    const winner = yield context.df.Task.any([challengeResponseTask, timeoutTask]);
    if (winner === timeoutTask) break; // timeout expired
    if (challengeResponseTask.result === challengeCode) {
      authorized = true;
      break;
    }
  }
  // All pending timers must be complete or canceled before the function exits.
  if (!timeoutTask.isCompleted) timeoutTask.cancel();
  return authorized;
});

df.app.activity("E4_SendSmsChallenge", {
  handler: (phoneNumber: string) => {
    const code = Math.floor(Math.random() * 10000);
    smsOutbox.push({ phoneNumber, code });
    return code;
  },
});

// ---- Human interaction with escalation (the overview's approval pattern): approve within 72 h or escalate ----
export const approvals: Array<{ kind: "approved" | "escalated"; detail: unknown }> = [];

df.app.orchestration("ApprovalWorkflow", function* (context) {
  const dueTime = new Date(context.df.currentUtcDateTime.getTime() + 72 * 60 * 60 * 1000);
  const durableTimeout = context.df.createTimer(dueTime);
  const approvalEvent = context.df.waitForExternalEvent("ApprovalEvent");
  const winningEvent = yield context.df.Task.any([approvalEvent, durableTimeout]);
  if (winningEvent === approvalEvent) {
    durableTimeout.cancel();
    yield context.df.callActivity("ProcessApproval", approvalEvent.result);
    return "approved";
  }
  yield context.df.callActivity("Escalate");
  return "escalated";
});

df.app.activity("ProcessApproval", {
  handler: (approval: unknown) => void approvals.push({ kind: "approved", detail: approval }),
});
df.app.activity("Escalate", {
  handler: () => void approvals.push({ kind: "escalated", detail: null }),
});

// ---- Automatic retry on failure (callActivityWithRetry sample) ----
const flakyAttempts = new Map<string, number>();

df.app.orchestration("CallActivityWithRetry", function* (context) {
  const firstRetryIntervalInMilliseconds = 5000;
  const maxNumberOfAttempts = 3;
  const retryOptions = new df.RetryOptions(firstRetryIntervalInMilliseconds, maxNumberOfAttempts);
  const result: unknown = yield context.df.callActivityWithRetry(
    "FlakyFunction",
    retryOptions,
    context.df.getInput(),
  );
  return result;
});

/** Fails the first `failures` calls for a key, then reports how many attempts it took. */
df.app.activity("FlakyFunction", {
  handler: (input: { key: string; failures: number }) => {
    const attempt = (flakyAttempts.get(input.key) ?? 0) + 1;
    flakyAttempts.set(input.key, attempt);
    if (attempt <= input.failures) throw new Error(`transient failure #${attempt}`);
    return { attempts: attempt };
  },
});

// ---- Durable entity (Counter) ----
df.app.entity("Counter", (context) => {
  const currentValue: number = context.df.getState(() => 0) as number;
  switch (context.df.operationName) {
    case "add": {
      const amount = context.df.getInput() as number;
      context.df.setState(currentValue + amount);
      break;
    }
    case "reset":
      context.df.setState(0);
      break;
    case "get":
      context.df.return(currentValue);
      break;
  }
});

df.app.orchestration("CounterOrchestration", function* (context) {
  const entityId = new df.EntityId("Counter", context.df.getInput() as string);
  // Two-way call to the entity which returns a value - awaits the response
  const currentValue: number = yield context.df.callEntity(entityId, "get");
  if (currentValue < 10) {
    // One-way signal to the entity which updates the value - does not await a response
    context.df.signalEntity(entityId, "add", 1);
  }
  return currentValue;
});

// ---- HTTP starter (the quickstart's client function) ----
df.app.client.http("DurableFunctionsHttpStart", {
  route: "orchestrators/{orchestratorName}",
  methods: ["POST"],
  handler: async (request: HttpRequest, client: df.DurableClient, context: InvocationContext) => {
    const body: unknown = await request.text();
    const instanceId = await client.startNew(request.params.orchestratorName as string, {
      input: body === "" ? undefined : body,
    });
    context.log(`Started orchestration with ID = '${instanceId}'.`);
    return client.createCheckStatusResponse(request, instanceId);
  },
});

// An ordinary HTTP function, to show the engine only takes the durable registrations.
app.http("SamplesPing", { handler: () => ({ body: "pong" }) });
