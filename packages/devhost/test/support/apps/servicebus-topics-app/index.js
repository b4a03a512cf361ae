// Sample app for the devhost's topic and batch tests, written exactly as for Azure (v4 programming model).
// POST /api/orders sends the posted messages to the "orders" topic with @azure/service-bus; two topic triggers
// each record what their subscription's rule let through, and a batched one (cardinality "many") records whole
// batches, as does a batched queue trigger that fails on request. GET /api/seen reports everything.
"use strict";
const { app } = require("@azure/functions");
const { ServiceBusClient } = require("@azure/service-bus");

const seen = { bigBlue: [], euJson: [], auditBatches: [], workBatches: [] };
let client;
let sender;

app.post("orders", {
  handler: async (request) => {
    client ??= new ServiceBusClient(process.env.ServiceBusConnection);
    sender ??= client.createSender("orders");
    const messages = await request.json();
    await sender.sendMessages(messages);
    return { status: 202 };
  },
});

const record = (list) => (message, context) => {
  list.push({ message, metadata: context.triggerMetadata });
};

app.serviceBusTopic("bigBlue", {
  topicName: "orders",
  subscriptionName: "big-blue",
  connection: "ServiceBusConnection",
  handler: record(seen.bigBlue),
});

app.serviceBusTopic("euJson", {
  topicName: "%ORDERS_TOPIC%",
  subscriptionName: "eu-json",
  connection: "ServiceBusConnection",
  handler: record(seen.euJson),
});

app.serviceBusTopic("auditBatch", {
  topicName: "orders",
  subscriptionName: "audit",
  connection: "ServiceBusConnection",
  cardinality: "many",
  handler: (messages, context) => {
    seen.auditBatches.push({ messages, metadata: context.triggerMetadata });
  },
});

app.serviceBusQueue("workBatch", {
  queueName: "batch-work",
  connection: "ServiceBusConnection",
  cardinality: "many",
  handler: (messages, context) => {
    seen.workBatches.push({ messages, metadata: context.triggerMetadata });
    if (messages.some((message) => message && message.fail))
      throw new Error("failing the whole batch on purpose");
  },
});

app.get("seen", { handler: () => ({ jsonBody: seen }) });
