// Sample app for the devhost's Service Bus tests, written exactly as for Azure (v4 programming model).
// `work` records what it received and fails on request; `GET /api/seen` reports what it saw.
"use strict";
const { app, output } = require("@azure/functions");

const seen = [];
let running = 0;
let maxRunning = 0;

const results = output.serviceBusQueue({ queueName: "%RESULTS_QUEUE%", connection: "ServiceBusConnection" });

app.serviceBusQueue("work", {
  queueName: "%WORK_QUEUE%",
  connection: "ServiceBusConnection",
  extraOutputs: [results],
  handler: async (message, context) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    try {
      seen.push({ message, metadata: context.triggerMetadata });
      context.log(`work got ${JSON.stringify(message)}`);
      if (message && message.holdMs) await new Promise((resolve) => setTimeout(resolve, message.holdMs));
      if (message && message.fail) throw new Error(`failing on purpose (${message.id})`);
      context.extraOutputs.set(results, { id: message.id, done: true });
    } finally {
      running--;
    }
  },
});

// An array returned through the return binding is one message per element.
app.serviceBusQueue("fanOut", {
  queueName: "%FANOUT_QUEUE%",
  connection: "ServiceBusConnection",
  return: output.serviceBusQueue({ queueName: "%RESULTS_QUEUE%", connection: "ServiceBusConnection" }),
  handler: (message) => message.parts.map((part) => ({ part })),
});

app.get("seen", { handler: () => ({ jsonBody: { seen, maxRunning } }) });
