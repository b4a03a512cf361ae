// Sample app for the durable HTTP API tests: written as for Azure (v4 programming model), in the shape of the
// Durable Functions quickstart and the documentation's patterns (an HTTP starter that returns the check-status
// response, human interaction, a reminder timer, function chaining, a sub-orchestration, a counter entity and
// durable HTTP calls). Plain CommonJS, so that it needs no build step.
"use strict";
const { app } = require("@azure/functions");
const df = require("durable-functions");

// The quickstart's starter: POST /api/orchestrators/{name} with the input as the body.
df.app.client.http("HttpStart", {
  route: "orchestrators/{orchestratorName}",
  methods: ["POST"],
  handler: async (request, client) => {
    const body = await request.text();
    const instanceId = await client.startNew(request.params.orchestratorName, {
      input: body ? JSON.parse(body) : undefined,
    });
    return client.createCheckStatusResponse(request, instanceId);
  },
});

// Instance management through the durable client's own methods.
df.app.client.http("Manage", {
  route: "manage/{action}/{instanceId}",
  methods: ["POST", "GET"],
  handler: async (request, client) => {
    const { action, instanceId } = request.params;
    const reason = request.query.get("reason") ?? "";
    try {
      switch (action) {
        case "suspend":
          await client.suspend(instanceId, reason);
          break;
        case "resume":
          await client.resume(instanceId, reason);
          break;
        case "rewind":
          await client.rewind(instanceId, reason);
          break;
        case "status":
          return {
            jsonBody: await client.getStatus(instanceId, { showHistory: true, showHistoryOutput: true }),
          };
        default:
          return { status: 404 };
      }
      return { status: 202 };
    } catch (err) {
      return { status: 500, jsonBody: { error: err.message } };
    }
  },
});

// Human interaction: waits for an approval, then records it.
df.app.orchestration("ApprovalWorkflow", function* (context) {
  const request = context.df.getInput();
  context.df.setCustomStatus("waiting for approval");
  const approval = yield context.df.waitForExternalEvent("Approval");
  context.df.setCustomStatus(null);
  return yield context.df.callActivity("RecordDecision", { request, approval });
});
df.app.activity("RecordDecision", {
  handler: ({ request, approval }) =>
    `${request.item}: ${approval.approved ? "approved" : "rejected"} by ${approval.by}`,
});

// A reminder an hour from now.
df.app.orchestration("Reminder", function* (context) {
  const due = new Date(context.df.currentUtcDateTime.getTime() + 60 * 60 * 1000);
  yield context.df.createTimer(due);
  return yield context.df.callActivity("SendReminder", context.df.getInput());
});
df.app.activity("SendReminder", { handler: (text) => `reminded: ${text}` });

// Function chaining.
df.app.orchestration("HelloCities", function* (context) {
  const greetings = [];
  for (const city of context.df.getInput()) greetings.push(yield context.df.callActivity("SayHello", city));
  return greetings;
});
df.app.activity("SayHello", { handler: (city) => `Hello ${city}!` });

// An order whose card charge fails the first time it is tried: a transient fault to rewind over.
const attempts = new Map();
df.app.orchestration("ProcessOrder", function* (context) {
  const order = context.df.getInput();
  const receipt = yield context.df.callActivity("ChargeCard", order);
  const shipment = yield context.df.callActivity("ShipOrder", order);
  return { receipt, shipment };
});
df.app.activity("ChargeCard", {
  handler: (order) => {
    const attempt = (attempts.get(`charge:${order.id}`) ?? 0) + 1;
    attempts.set(`charge:${order.id}`, attempt);
    if (attempt === 1) throw new Error(`card declined for order ${order.id} (payment service busy)`);
    return `charged ${order.amount} for ${order.id}`;
  },
});
df.app.activity("ShipOrder", {
  handler: (order) => {
    attempts.set(`ship:${order.id}`, (attempts.get(`ship:${order.id}`) ?? 0) + 1);
    return `shipped ${order.id}`;
  },
});
// A batch of orders, each in its own sub-orchestration.
df.app.orchestration("ProcessBatch", function* (context) {
  const results = [];
  for (const order of context.df.getInput())
    results.push(yield context.df.callSubOrchestrator("ProcessOrder", order));
  return results;
});
app.get("Attempts", {
  route: "attempts/{key}",
  handler: (request) => ({ jsonBody: attempts.get(request.params.key) ?? 0 }),
});

// Durable HTTP: the request comes as the input; a resource asks for a managed identity token.
df.app.orchestration("CallApi", function* (context) {
  const { resource, ...request } = context.df.getInput();
  const options = resource
    ? { ...request, tokenSource: new df.ManagedIdentityTokenSource(resource) }
    : request;
  try {
    const response = yield context.df.callHttp(options);
    return { statusCode: response.statusCode, headers: response.headers, content: response.content };
  } catch (err) {
    return { error: err.message };
  }
});

// The documentation's counter entity.
df.app.entity("Counter", (context) => {
  const value = context.df.getState(() => 0);
  switch (context.df.operationName) {
    case "add":
      context.df.setState(value + context.df.getInput());
      break;
    case "reset":
      context.df.setState(0);
      break;
    case "get":
      context.df.return(value);
      break;
    case "delete":
      context.df.destructOnExit();
      break;
  }
});

// An activity with a durable client of its own (an extra input, as any function may have): it starts the
// follow-up orchestration itself, as a hand-over from one unit of work to the next does.
df.app.activity("StartFollowUp", {
  extraInputs: [df.input.durableClient()],
  handler: async (city, context) =>
    df.getClient(context).startNew("HelloCities", { instanceId: `follow-up-${city}`, input: [city] }),
});
df.app.orchestration("HandOver", function* (context) {
  return yield context.df.callActivity("StartFollowUp", context.df.getInput());
});
