// Sample app for the devhost's tests of host behaviour an app can see, written exactly as for Azure (v4
// programming model): app-level hook data, what postInvocation hooks see, cookies, disabled functions, the warmup
// trigger and Service Bus queues. `GET /api/observed` reports what this process saw.
"use strict";
const fs = require("node:fs");
const { app, output } = require("@azure/functions");

const observed = {
  postInvocation: [],
  warmups: [],
  timerRuns: 0,
  pausedWorkRuns: 0,
  workRuns: 0,
  auditRuns: 0,
};

// App-level hooks: what appStart keeps in hookData, appTerminate reads back; it reports it to the file the
// HOOK_REPORT_FILE setting names, since nothing else outlives the app.
app.hook.appStart((context) => {
  context.hookData.openedBy = "appStart";
});
app.hook.appTerminate((context) => {
  if (!process.env.HOOK_REPORT_FILE) return;
  fs.writeFileSync(process.env.HOOK_REPORT_FILE, JSON.stringify({ hookData: context.hookData }));
});

const describe = (value) => (value === null ? "null" : value === undefined ? "undefined" : String(value));
app.hook.postInvocation((context) => {
  const functionName = context.invocationContext.functionName;
  if (functionName !== "succeeds" && functionName !== "fails") return;
  observed.postInvocation.push({
    functionName,
    error: describe(context.error),
    result: context.result === null ? "null" : typeof context.result,
    invocationHookData: Object.keys(context.hookData),
  });
});

app.get("succeeds", { handler: () => ({ body: "ok" }) });
app.get("fails", { handler: () => Promise.reject(new Error("boom")) });

// A sign-in that sets its cookies as a login page under /api would.
app.post("login", {
  handler: () => ({
    status: 204,
    cookies: [
      { name: "session", value: "a b=c;d", httpOnly: true, secure: true, sameSite: "Lax", maxAge: 3600.9 },
      {
        name: "prefs",
        value: "dark",
        path: "/api",
        domain: "example.test",
        expires: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)),
        sameSite: "Strict",
      },
      { name: "tracker", value: "1", sameSite: "None", secure: true },
      { name: "plain", value: "x" },
    ],
  }),
});

app.post("echo", { handler: async (request) => ({ body: `${(await request.text()).length} bytes` }) });

// Disabled by the tests through AzureWebJobs.<name>.Disabled / AzureWebJobs_<name>_Disabled settings.
app.get("disabledHttp", { route: "disabled-http", handler: () => ({ body: "should not run" }) });
app.timer("disabledTimer", {
  schedule: "*/1 * * * * *",
  runOnStartup: true,
  handler: () => {
    observed.timerRuns++;
  },
});
app.serviceBusQueue("pausedWork", {
  queueName: "paused-items",
  connection: "ServiceBusConnection",
  handler: () => {
    observed.pausedWorkRuns++;
  },
});
// Its setting has the double-underscore form, which the host does not read: it stays enabled.
app.get("stillEnabled", { route: "still-enabled", handler: () => ({ body: "running" }) });

const notifications = output.serviceBusQueue({
  queueName: "notifications",
  connection: "ServiceBusConnection",
});
app.serviceBusQueue("work", {
  queueName: "work-items",
  connection: "ServiceBusConnection",
  extraOutputs: [notifications],
  handler: (message, context) => {
    observed.workRuns++;
    context.extraOutputs.set(notifications, message);
  },
});
app.serviceBusQueue("audit", {
  queueName: "audit-log",
  connection: "ServiceBusConnection",
  handler: () => {
    observed.auditRuns++;
  },
});

app.warmup("warmup", {
  handler: (warmupContext, context) => {
    observed.warmups.push({ warmupContext, functionName: context.functionName });
  },
});
// Not named "warmup": the host never runs it.
app.warmup("preload", {
  handler: () => {
    observed.warmups.push({ functionName: "preload" });
  },
});

app.get("observed", { handler: () => ({ jsonBody: observed }) });
