// Sample app for the devhost's timer tests, written exactly as for Azure (v4 programming model).
// `GET /api/ticks` reports every timer invocation seen by this process.
"use strict";
const { app } = require("@azure/functions");

const ticks = [];
const startups = [];

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

app.get("ticks", { handler: () => ({ jsonBody: { ticks, startups } }) });
