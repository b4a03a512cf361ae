// The order app, with every Scheduler activity failing transiently on its first execution for each order, the
// way a fresh deployment's activities fail while their role assignments propagate (403 from Cosmos DB or
// Service Bus): the error is thrown before the activity touches anything. The e2e activity-retry test loads it;
// ORDER_APP_ENTRY (set by test/support/e2eChild.ts) names the transpiled app entry.
"use strict";

const df = require("durable-functions");

const entry = process.env.ORDER_APP_ENTRY;
if (!entry) throw new Error("ORDER_APP_ENTRY must name the transpiled order app entry (src/index.js)");

const failedOnce = new Set();
const register = df.app.activity.bind(df.app);
df.app.activity = (name, options) =>
  register(name, {
    ...options,
    handler: async (input, context) => {
      const key = `${name}:${input && input.orderId}`;
      if (name.startsWith("scheduler") && !failedOnce.has(key)) {
        failedOnce.add(key);
        context.warn(`flaky: ${key} fails its first execution`);
        throw new Error(`flaky: ${key}: 403 Forbidden (role assignment not yet propagated)`);
      }
      return options.handler(input, context);
    },
  });

require(entry);
