// Sample app for the devhost's time-skipping tests, written exactly as for Azure (v4 programming model). It
// reads time only through Date, as apps do: a time-skipping host makes that the host's clock.
// `GET /api/report` reports what the timer, the Service Bus trigger and the activities saw.
"use strict";
const http = require("node:http");
const { app } = require("@azure/functions");
const df = require("durable-functions");

const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;

const hourly = [];
const received = [];
const attempts = [];

// An orchestration that sleeps for a week between two activities.
df.app.orchestration("weekLong", function* (context) {
  const before = yield context.df.callActivity("readClock", "before");
  yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 7 * DAY_MS));
  const after = yield context.df.callActivity("readClock", "after");
  return { before, after };
});

df.app.activity("readClock", {
  handler: (label) => ({ label, now: new Date().toISOString(), nowMs: Date.now() }),
});

// A supervisor's retries with production back-offs: 5 minutes, then 10, then 20; the activity fails three times.
df.app.orchestration("retried", function* (context) {
  const retry = new df.RetryOptions(5 * MINUTE_MS, 4);
  retry.backoffCoefficient = 2;
  return yield context.df.callActivityWithRetry("flaky", retry, null);
});

df.app.activity("flaky", {
  handler: () => {
    attempts.push(Date.now());
    if (attempts.length <= 3) throw new Error(`attempt ${attempts.length} fails on purpose`);
    return attempts;
  },
});

// Every hour in the timer test; the other tests set a yearly schedule, or the clock would stop at every hour.
app.timer("hourly", {
  schedule: "%HOURLY_SCHEDULE%",
  handler: (timer) => {
    hourly.push({ now: new Date().toISOString(), isPastDue: timer.isPastDue });
  },
});

app.serviceBusQueue("scheduled", {
  queueName: "%SCHEDULED_QUEUE%",
  connection: "ServiceBusConnection",
  handler: (message, context) => {
    received.push({
      message,
      now: Date.now(),
      enqueuedTimeUtc: context.triggerMetadata.enqueuedTimeUtc,
      deliveryCount: context.triggerMetadata.deliveryCount,
    });
    if (message && message.failFirst && context.triggerMetadata.deliveryCount === 1) {
      throw new Error(`failing the first delivery of ${message.id} on purpose`);
    }
  },
});

// A call to a remote service (REMOTE_URL) that takes real time to answer: time must not jump meanwhile.
app.get("callRemote", {
  handler: async () => {
    const before = Date.now();
    const answer = await new Promise((resolve, reject) => {
      http
        .get(process.env.REMOTE_URL, (response) => {
          let text = "";
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () => resolve(text));
        })
        .on("error", reject);
    });
    return { jsonBody: { before, after: Date.now(), answer } };
  },
});

app.get("report", { handler: () => ({ jsonBody: { hourly, received, attempts } }) });
