// Sample app for the devhost's HTTP trigger tests: written exactly as for Azure (v4 programming model),
// plain CommonJS so that it needs no build step.
"use strict";
const { app } = require("@azure/functions");
const df = require("durable-functions");

let appStarted = false;
app.hook.appStart(() => {
  appStarted = true;
});
app.hook.preInvocation((context) => {
  context.invocationContext.extraInputs.set("hookedAt", "preInvocation");
});

app.http("hello", {
  authLevel: "function",
  handler: async (request) => {
    const fromBody = request.method === "POST" ? ((await request.json()) ?? {}).name : undefined;
    return { body: `Hello, ${request.query.get("name") ?? fromBody ?? "world"}!` };
  },
});

app.get("getOrder", {
  route: "orders/{orderId}",
  handler: (request, context) => ({
    jsonBody: {
      orderId: request.params.orderId,
      function: context.functionName,
      hooked: context.extraInputs.get("hookedAt") ?? null,
    },
  }),
});

app.get("getItem", {
  route: "items/{id:int}",
  handler: (request) => ({ jsonBody: { id: Number(request.params.id), kind: "by-id" } }),
});

app.get("listItems", {
  route: "items/{category:alpha?}",
  handler: (request) => ({ jsonBody: { category: request.params.category ?? null, kind: "list" } }),
});

app.get("files", {
  route: "files/{*path}",
  handler: (request) => ({ jsonBody: { path: request.params.path ?? "" } }),
});

app.http("echo", {
  methods: ["POST", "PUT"],
  route: "echo/{tag?}",
  handler: async (request, context) => ({
    status: 201,
    headers: { "x-echo-method": request.method },
    cookies: [{ name: "session", value: "abc", httpOnly: true, path: "/" }],
    jsonBody: {
      method: request.method,
      tag: request.params.tag ?? null,
      query: Object.fromEntries(request.query.entries()),
      contentType: request.headers.get("content-type"),
      body: await request.json(),
      invocationId: context.invocationId,
    },
  }),
});

// The URL as the app sees it, which the host builds from the request's Host header and target.
app.get("requestUrl", { route: "request-url", handler: (request) => ({ jsonBody: { url: request.url } }) });

app.get("fails", { handler: () => Promise.reject(new Error("boom")) });

app.get("nothing", { handler: () => undefined });

app.get("started", { handler: () => ({ jsonBody: { appStarted } }) });

app.get("dashboard", {
  handler: () => ({ headers: { "content-type": "text/html" }, body: "<h1>dashboard</h1>" }),
});

// Durable client over HTTP: start an orchestration and wait for it.
df.app.orchestration("helloSequence", function* (context) {
  const names = context.df.getInput();
  const greetings = [];
  for (const name of names) greetings.push(yield context.df.callActivity("sayHello", name));
  return greetings;
});
df.app.activity("sayHello", { handler: (name) => `Hello, ${name}!` });
df.app.client.http("startHello", {
  route: "hello-orchestration",
  methods: ["POST"],
  handler: async (request, client) => {
    const instanceId = await client.startNew("helloSequence", { input: await request.json() });
    return client.waitForCompletionOrCreateCheckStatusResponse(request, instanceId, {
      timeoutInMilliseconds: 10_000,
    });
  },
});
