/**
 * The OpenAPI document the app serves (GET /api/openapi.json), held to the app running on the devhost: every HTTP
 * function the devhost loaded is an operation of the document, with its route, method and access, and the other
 * way round; and real calls, on the happy paths and the refusals, answer only statuses the document lists for
 * their operation, with bodies its schemas accept.
 *
 * Not produced here, and documented all the same: the Functions host's 401 for a missing function key (the
 * devhost checks no keys), the 503 and the dashboard's 302 of OPERATOR_AUTH=platform without the platform's
 * authentication (the devhost runs OPERATOR_AUTH=header), and health's 503 (test/integration/api/health.test.ts).
 */
import fs from "node:fs";
import { describe, expect } from "vitest";
import { encodeClientPrincipal, type ClientPrincipal } from "devhost/auth";
import { createDependencies } from "../../src/app/dependencies";
import { loadConfig } from "../../src/config";
import { orderWorkflowV1 } from "../../src/domain";
import { BACKLOG_CACHE_MS } from "../../src/coordination/backlog";
import { pendingRecord, sampleOrder } from "../support/domain";
import { type E2E } from "../support/e2e";
import { e2eOrder, submitWithFaults } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";
import { OpenApiCheck } from "../support/openApi";

const operator = { name: "ada@contoso.com", id: "oid-ada", roles: ["Orders.Operator"] };
const reader = { name: "bob@contoso.com", id: "oid-bob", roles: ["Orders.Reader"] };
const roleless = { name: "eve@contoso.com", id: "oid-eve", roles: [] };

/** What each test called, as `operationId status`: the last test checks that every operation answered a 2xx. */
const answered = new Set<string>();

const it = e2eTest({ MAX_PENDING_BACKLOG: "2", AGENT_MAX_ATTEMPTS: "1" }, { signedInAs: null }).extend<{
  $file: { api: OpenApiCheck; orders: { processed: string; failed: string } };
}>({
  // The document as the app serves it, to an anonymous caller.
  api: [
    async ({ e2e }, use) => {
      const res = await e2e.api("/api/openapi.json");
      expect(res.status).toBe(200);
      await use(new OpenApiCheck((await res.json()) as OpenApiCheck["document"]));
    },
    { scope: "file" },
  ],
  // An order the app processed, and one it gave up on (Error): what the reads and the actions work on.
  orders: [
    async ({ e2e }, use) => {
      const processed = e2eOrder("OAS");
      expect((await e2e.submit(processed)).status).toBe(202);
      await e2e.waitForState(processed.orderId, ["Processed"]);
      const failed = e2eOrder("OASFAIL");
      await submitWithFaults(e2e, failed, { service: "inventory", operation: "reserve", kind: "transient" });
      await e2e.waitForState(failed.orderId, ["Error"]);
      await use({ processed: processed.orderId, failed: failed.orderId });
    },
    { scope: "file" },
  ],
});

interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** Sent as JSON, unless it is a string, which is sent as it is. */
  body?: unknown;
  /** Default application/json when there is a body. */
  contentType?: string;
  /** The principal; default: the operator for an operation that needs a signed-in user, else none. */
  as?: ClientPrincipal | null;
  headers?: Record<string, string>;
}

/**
 * Calls an operation as the document describes it (its server, path and method), and checks that the answer has
 * the `expected` status, that the document lists it, and that the body is what the document says. The body, parsed
 * (a page's: `{text}`).
 */
async function call(
  e2e: E2E,
  api: OpenApiCheck,
  operationId: string,
  expected: number,
  c: Call = {},
): Promise<Record<string, unknown>> {
  const { path, method, operation } = api.operation(operationId);
  const signedIn = operation.security.some((s) => "signedIn" in s);
  const principal = c.as === undefined ? (signedIn ? operator : null) : c.as;
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = c.params?.[name];
    if (value === undefined) throw new Error(`${operationId}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const query = c.query ? `?${new URLSearchParams(c.query).toString()}` : "";
  const server = (api.document.servers as { url: string }[])[0]!.url;
  const res = await e2e.api(`${server}${filled}${query}`, {
    method: method.toUpperCase(),
    redirect: "manual",
    headers: {
      ...(c.body !== undefined ? { "content-type": c.contentType ?? "application/json" } : {}),
      ...(principal ? encodeClientPrincipal(principal) : {}),
      ...c.headers,
    },
    ...(c.body !== undefined ? { body: typeof c.body === "string" ? c.body : JSON.stringify(c.body) } : {}),
  });
  const body = await res.text();
  expect(res.status, `${operationId} ${filled}${query}: ${body.slice(0, 300)}`).toBe(expected);
  const contentType = res.headers.get("content-type");
  expect(api.responseErrors(operationId, { status: res.status, contentType, body })).toEqual([]);
  answered.add(`${operationId} ${res.status}`);
  return contentType?.startsWith("application/json")
    ? (JSON.parse(body) as Record<string, unknown>)
    : { text: body };
}

describe("the document", () => {
  it("is served to anyone, is valid OpenAPI 3.1, and names the host's route prefix as its server", async ({
    e2e,
    api,
  }) => {
    expect(api.documentErrors()).toEqual([]);
    const { extensions } = JSON.parse(fs.readFileSync("host.json", "utf8")) as {
      extensions: { http: { routePrefix: string } };
    };
    expect(api.document.servers).toEqual([{ url: `/${extensions.http.routePrefix}` }]);
    await call(e2e, api, "openApi", 200);
  });

  it("describes every HTTP function the app registers, with its route, method and access, and no other", ({
    e2e,
    api,
  }) => {
    const registered = [...e2e.host.app.functions.values()]
      .filter((r) => r.trigger.type === "httpTrigger")
      .flatMap((r) =>
        (r.trigger.methods as string[]).map((method) => ({
          function: r.name,
          route: `/${String(r.trigger.route)}`,
          method: method.toLowerCase(),
          authLevel: r.trigger.authLevel,
        })),
      );
    const documented = api.operations.map(({ path, method, operation }) => ({
      function: operation["x-azure-function"],
      route: path,
      method,
      // The host checks a key only at authLevel function; every other route is anonymous to it.
      authLevel: operation.security.some((s) => "functionKey" in s) ? "function" : "anonymous",
    }));
    const byRoute = (a: { route: string; method: string }, b: { route: string; method: string }) =>
      `${a.route} ${a.method}`.localeCompare(`${b.route} ${b.method}`);
    expect(documented.sort(byRoute)).toEqual(registered.sort(byRoute));
  });
});

describe("the machine routes", () => {
  it("POST /api/orders: 202, the same again 202, different data 409, bad input 400, 415, 413", async ({
    e2e,
    api,
  }) => {
    const order = e2eOrder("OASSUBMIT");
    const accepted = await call(e2e, api, "submitOrder", 202, { body: order });
    expect(accepted).toMatchObject({ orderId: order.orderId });
    await call(e2e, api, "submitOrder", 202, { body: order });
    await call(e2e, api, "submitOrder", 409, { body: { ...order, customerId: "someone-else" } });
    await call(e2e, api, "submitOrder", 400, { body: { ...order, items: [] } });
    await call(e2e, api, "submitOrder", 400, { body: "{not json" });
    await call(e2e, api, "submitOrder", 415, { body: JSON.stringify(order), contentType: "text/plain" });
    const maxBytes = loadConfig(e2e.host.env).maxRequestBytes;
    await call(e2e, api, "submitOrder", 413, { body: { ...order, padding: "x".repeat(maxBytes) } });
  });

  it("GET /api/orders/{orderId}/status: 200, 404, 400", async ({ e2e, api, orders }) => {
    const status = await call(e2e, api, "getOrderStatus", 200, { params: { orderId: orders.processed } });
    expect(status).toMatchObject({ orderId: orders.processed, processState: "Processed" });
    await call(e2e, api, "getOrderStatus", 200, { params: { orderId: orders.failed } });
    await call(e2e, api, "getOrderStatus", 404, { params: { orderId: "NO-SUCH-ORDER" } });
    await call(e2e, api, "getOrderStatus", 400, { params: { orderId: "-not-an-id" } });
  });
});

describe("the routes for people", () => {
  it("every one answers 401 without a principal, or with a broken one, and 403 without its role", async ({
    e2e,
    api,
    orders,
  }) => {
    for (const { operationId, method, operation } of api.operations) {
      const roles = operation.security.flatMap((s) => (s.signedIn as string[] | undefined) ?? []);
      if (roles.length === 0) continue;
      const c: Call = {
        params: { orderId: orders.processed, module: "main.js" },
        ...(method === "post" ? { body: {} } : {}),
      };
      await call(e2e, api, operationId, 401, { ...c, as: null });
      await call(e2e, api, operationId, 401, { ...c, as: null, headers: { "x-ms-client-principal": "e30" } });
      await call(e2e, api, operationId, 403, { ...c, as: roleless });
      if (roles.includes("Orders.Operator")) await call(e2e, api, operationId, 403, { ...c, as: reader });
    }
  });

  it("reads: the listing, an order, its orchestration and trace, stats, timings, health and the dashboard", async ({
    e2e,
    api,
    orders,
  }) => {
    const page = await call(e2e, api, "listOrders", 200, { as: reader, query: { limit: "1" } });
    expect(page.continuation).toEqual(expect.any(String));
    await call(e2e, api, "listOrders", 200, {
      as: reader,
      query: { limit: "1", continuation: page.continuation as string },
    });
    await call(e2e, api, "listOrders", 200, { as: reader, query: { state: "Error" } });
    await call(e2e, api, "listOrders", 400, { as: reader, query: { limit: "0" } });
    await call(e2e, api, "listOrders", 400, { as: reader, query: { continuation: "garbage" } });
    await call(e2e, api, "listOrders", 400, { as: reader, query: { state: "Done" } });

    for (const orderId of [orders.processed, orders.failed]) {
      const details = await call(e2e, api, "getOrder", 200, { as: reader, params: { orderId } });
      expect(details.state).toMatchObject({ orderId });
      await call(e2e, api, "getOrchestration", 200, { as: reader, params: { orderId } });
    }
    await call(e2e, api, "getOrder", 404, { as: reader, params: { orderId: "NO-SUCH-ORDER" } });
    await call(e2e, api, "getOrder", 400, { as: reader, params: { orderId: "-not-an-id" } });
    await call(e2e, api, "getOrchestration", 404, { as: reader, params: { orderId: "NO-SUCH-ORDER" } });
    await call(e2e, api, "getOrchestration", 400, { as: reader, params: { orderId: "-not-an-id" } });
    // The shipped settings keep spans in memory on the devhost (LOCAL_TRACING=memory).
    const trace = await call(e2e, api, "getOrderTrace", 200, {
      as: reader,
      params: { orderId: orders.processed },
    });
    expect(trace).toMatchObject({ orderId: orders.processed });
    await call(e2e, api, "getOrderTrace", 404, { as: reader, params: { orderId: "NO-SUCH-ORDER" } });
    await call(e2e, api, "getOrderTrace", 400, { as: reader, params: { orderId: "-not-an-id" } });

    await call(e2e, api, "stats", 200, { as: reader });
    await call(e2e, api, "timings", 200, { as: reader });
    await call(e2e, api, "health", 200);
    const dashboard = await call(e2e, api, "dashboard", 200, { as: reader });
    expect(dashboard.text).toContain('href="/api/openapi.json"');
    const module = await call(e2e, api, "dashboardModule", 200, {
      as: reader,
      params: { module: "tuning.js" },
    });
    expect(module.text).toContain('from "./timingBudget.js"');
    await call(e2e, api, "dashboardModule", 404, { as: reader, params: { module: "index.js" } });
  });

  it("retry and cancel: 202, 409 with the refusal's code, 404, 400, 415, 413", async ({
    e2e,
    api,
    orders,
  }) => {
    const processed = { orderId: orders.processed };
    for (const operationId of ["retryOrder", "cancelOrder"]) {
      const refused = await call(e2e, api, operationId, 409, { params: processed, body: {} });
      expect(refused.details).toMatchObject({ code: "WrongState", processState: "Processed" });
      await call(e2e, api, operationId, 404, { params: { orderId: "NO-SUCH-ORDER" }, body: {} });
      await call(e2e, api, operationId, 400, { params: { orderId: "-not-an-id" }, body: {} });
      await call(e2e, api, operationId, 400, { params: processed, body: { why: "unknown field" } });
      await call(e2e, api, operationId, 415, { params: processed, body: "{}", contentType: "text/plain" });
      const maxBytes = loadConfig(e2e.host.env).maxRequestBytes;
      await call(e2e, api, operationId, 413, { params: processed, body: { reason: "x".repeat(maxBytes) } });
    }
    await e2e.faults.clear();
    const retried = await call(e2e, api, "retryOrder", 202, {
      params: { orderId: orders.failed },
      body: { reason: "from the OpenAPI test" },
    });
    expect(retried).toEqual({ orderId: orders.failed, processState: "Pending" });
  });

  it("bulk actions: dry runs, a bad filter, and 429 while the Pending backlog is full, as the front door's", async ({
    e2e,
    api,
  }) => {
    const dryRun = { filter: { state: "Error" }, dryRun: true };
    await call(e2e, api, "bulkRetry", 200, { body: dryRun });
    await call(e2e, api, "bulkCancel", 200, { body: { ...dryRun, filter: { state: "Pending" } } });
    await call(e2e, api, "bulkRetry", 400, { body: { filter: { state: "Processed" } } });
    await call(e2e, api, "bulkCancel", 400, { body: "" });
    await call(e2e, api, "bulkCancel", 415, { body: JSON.stringify(dryRun), contentType: "text/plain" });

    // MAX_PENDING_BACKLOG (2) orders that wait an hour to be due: the backlog is full until they are cancelled.
    const deps = createDependencies(loadConfig(e2e.host.env));
    const waiting = ["OASWAIT-1", "OASWAIT-2"].map((prefix) =>
      sampleOrder({ orderId: e2eOrder(prefix).orderId }),
    );
    try {
      for (const order of waiting) {
        await deps.orders.ensure(order, new Date());
        const record = pendingRecord(order, orderWorkflowV1);
        await deps.states.create({ ...record, retryAt: new Date(Date.now() + 3_600_000).toISOString() });
      }
    } finally {
      await deps.close();
    }
    await new Promise((resolve) => setTimeout(resolve, BACKLOG_CACHE_MS));
    await call(e2e, api, "submitOrder", 429, { body: e2eOrder("OASFULL") });
    await call(e2e, api, "bulkRetry", 429, { body: { filter: { state: "Error" } } });
    // Never claimed: no orchestration yet.
    await call(e2e, api, "getOrchestration", 404, { as: reader, params: { orderId: waiting[0]!.orderId } });
    // An empty JSON body stands for {}.
    for (const [{ orderId }, body] of [
      [waiting[0]!, ""],
      [waiting[1]!, { reason: "from the OpenAPI test" }],
    ] as const) {
      expect(await call(e2e, api, "cancelOrder", 202, { params: { orderId }, body })).toMatchObject({
        orderId,
      });
    }
  });
});

it("every operation of the document answered a 2xx above (this test runs after the others)", ({ api }) => {
  const unanswered = api.operations
    .map((o) => o.operationId)
    .filter((id) => ![...answered].some((a) => a.startsWith(`${id} 2`)));
  expect(unanswered).toEqual([]);
});
