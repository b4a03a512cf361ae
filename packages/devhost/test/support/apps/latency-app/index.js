// Sample app for the latency profile tests, written as for Azure (v4 programming model): a Service Bus function
// that notes when each message reached it, an HTTP function, and an orchestration with one activity and one
// external event. host.json keeps the queue polling back-off short (maxQueuePollingInterval 1 s).
"use strict";
const { app } = require("@azure/functions");
const df = require("durable-functions");

const received = [];

app.serviceBusQueue("work", {
  queueName: "work",
  connection: "ServiceBusConnection",
  handler: (message) => {
    received.push({ id: message.id, at: Date.now() });
  },
});

app.get("received", { handler: () => ({ jsonBody: received }) });
app.get("ping", { handler: () => ({ jsonBody: { at: Date.now() } }) });

df.app.orchestration("flow", function* (context) {
  const done = yield context.df.callActivity("step", "one");
  const go = yield context.df.waitForExternalEvent("go");
  return `${done}/${go}`;
});

df.app.activity("step", { handler: (input) => `did ${input}` });
