// The order app, with the Scheduler failing once at each of its steps, the way a fresh deployment's calls fail
// while their role assignments propagate (403 from Cosmos DB or Service Bus), or a process dies mid-step:
// - every Scheduler activity fails its first execution for each order, before it touches anything;
// - the reply path's first raise of each event (the order's end, the one event it raises) fails after the answer
//   was recorded, as if the process had died between the write and telling the orchestration.
// The e2e scheduler-retry test loads it; ORDER_APP_ENTRY (set by test/support/e2eChild.ts) names the transpiled
// app entry.
"use strict";

const df = require("durable-functions");
// The client class df.getClient builds: its raiseEvent is the reply path's last call.
const { DurableClient } = require("durable-functions/lib/src/durableClient/DurableClient");

const entry = process.env.ORDER_APP_ENTRY;
if (!entry) throw new Error("ORDER_APP_ENTRY must name the transpiled order app entry (src/index.js)");

const failedOnce = new Set();
const firstTime = (key) => !failedOnce.has(key) && failedOnce.add(key);

const register = df.app.activity.bind(df.app);
df.app.activity = (name, options) =>
  register(name, {
    ...options,
    handler: async (input, context) => {
      const key = `${name}:${input && input.orderId}`;
      if (name.startsWith("scheduler") && firstTime(key)) {
        context.warn(`flaky: ${key} fails its first execution`);
        throw new Error(`flaky: ${key}: 403 Forbidden (role assignment not yet propagated)`);
      }
      return options.handler(input, context);
    },
  });

const raiseEvent = DurableClient.prototype.raiseEvent;
DurableClient.prototype.raiseEvent = async function (instanceId, eventName, eventData, options) {
  const key = `raiseEvent:${instanceId}:${eventName}`;
  if (firstTime(key)) {
    console.warn(`flaky: ${key} fails its first call`);
    throw new Error(`flaky: ${key}: the process died after the answer was recorded`);
  }
  return raiseEvent.call(this, instanceId, eventName, eventData, options);
};

require(entry);
