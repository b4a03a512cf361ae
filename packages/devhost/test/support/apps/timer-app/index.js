// Sample app for the devhost's timer tests, written exactly as for Azure (v4 programming model).
// `GET /api/ticks` reports every timer invocation seen by this process.
"use strict";
const { app } = require("@azure/functions");

const ticks = [];
const startups = [];
const flaky = [];

app.timer("tick", {
  schedule: "%TICK_SCHEDULE%",
  handler: (timer, context) => {
    ticks.push({
      isPastDue: timer.isPastDue,
      scheduleStatus: timer.scheduleStatus,
      schedule: timer.schedule,
    });
    context.log(`tick ${ticks.length}`);
  },
});

app.timer("startup", {
  schedule: "0 0 0 1 1 *",
  runOnStartup: true,
  handler: (timer) => {
    startups.push({ isPastDue: timer.isPastDue });
  },
});

// Shaped like the public sample timerTriggerWithRetry: it fails until its third attempt, which it can tell only
// from the retry context the host passes on every attempt under a retry policy.
app.timer("flaky", {
  schedule: "0 0 12 * * *",
  retry: { strategy: "fixedDelay", delayInterval: { seconds: 1 }, maxRetryCount: 4 },
  handler: (_timer, context) => {
    flaky.push(context.retryContext ?? null);
    if (!(context.retryContext?.retryCount >= 2)) throw new Error(`attempt ${flaky.length} fails`);
  },
});

app.get("ticks", { handler: () => ({ jsonBody: { ticks, startups, flaky } }) });
