/**
 * Operators are signed-in principals with an app role, not holders of a key or a header they wrote themselves.
 * The devhost plays the platform's authentication here: a client acts as a principal by sending the
 * x-ms-client-principal header the platform would send (`encodeClientPrincipal` of devhost/auth), and no
 * principal is added for it. Machine clients submit and read their order's status with a function key, and need
 * no principal.
 */
import { describe, expect } from "vitest";
import { encodeClientPrincipal } from "devhost/auth";
import { type E2E } from "../support/e2e";
import { e2eOrder, orderSnapshot } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";
import { pollUntil } from "../support/wait";

const it = e2eTest({}, { signedInAs: null }).extend<{ $file: { orderId: string } }>({
  // An order a machine client submitted and the app processed: what the people's routes read and act on.
  orderId: [
    async ({ e2e }, use) => {
      const order = e2eOrder("AUTH");
      expect((await e2e.submit(order)).status).toBe(202);
      await waitProcessed(e2e, order.orderId);
      await use(order.orderId);
    },
    { scope: "file" },
  ],
});

const operator = { name: "ada@contoso.com", id: "oid-ada", roles: ["Orders.Operator"] };
const reader = { name: "bob@contoso.com", id: "oid-bob", roles: ["Orders.Reader"] };
const roleless = { name: "eve@contoso.com", id: "oid-eve", roles: [] };

const as = (principal: typeof operator | null, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: {
    ...(init.headers as Record<string, string>),
    ...(principal ? encodeClientPrincipal(principal) : {}),
  },
});
const post = (principal: typeof operator | null, headers: Record<string, string> = {}) =>
  as(principal, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
const error = async (res: Response): Promise<string> => ((await res.json()) as { error: string }).error;

/** The order's processState as its submitter sees it (the machine route: no principal needed). */
async function statusOf(e2e: E2E, orderId: string): Promise<string | null> {
  const res = await e2e.api(`/api/orders/${orderId}/status`);
  return res.status === 200 ? ((await res.json()) as { processState: string | null }).processState : null;
}

async function waitProcessed(e2e: E2E, orderId: string): Promise<void> {
  await pollUntil(
    () => statusOf(e2e, orderId),
    (state) => state === "Processed",
    (last) => `${orderId} not Processed (last: ${last})`,
    { timeoutMs: 20_000, intervalMs: 200 },
  );
}

describe("routes for people", () => {
  const reads = (orderId: string) => [
    `/api/orders`,
    `/api/orders/${orderId}`,
    `/api/orders/${orderId}/orchestration`,
    `/api/orders/${orderId}/trace`,
    `/api/stats`,
    `/api/timings`,
  ];

  it("answer 401 to a caller who is not signed in, 403 to one without a role", async ({ e2e, orderId }) => {
    for (const path of [...reads(orderId), "/api/dashboard", "/api/dashboard/main.js"]) {
      const anonymous = await e2e.api(path);
      expect(anonymous.status, path).toBe(401);
      expect(await anonymous.text(), path).toContain("sign-in required");
      const noRole = await e2e.api(path, as(roleless));
      expect(noRole.status, path).toBe(403);
      expect(await noRole.text(), path).toContain("eve@contoso.com lacks the role Orders.Reader");
    }
    for (const path of ["retry", "cancel"].flatMap((a) => [
      `/api/orders/${orderId}/${a}`,
      `/api/bulk/${a}`,
    ])) {
      expect((await e2e.api(path, post(null))).status, path).toBe(401);
      expect((await e2e.api(path, post(roleless))).status, path).toBe(403);
    }
  });

  it("let a reader read but not act", async ({ e2e, orderId }) => {
    for (const path of reads(orderId)) expect((await e2e.api(path, as(reader))).status, path).toBe(200);
    const page = await e2e.api("/api/dashboard", as(reader));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("read only: retry and cancel need the operator role");
    const before = await orderSnapshot(e2e, orderId);
    const refused = await e2e.api(`/api/orders/${orderId}/cancel`, post(reader));
    expect(refused.status).toBe(403);
    expect(await error(refused)).toBe(
      "bob@contoso.com lacks the role Orders.Operator (roles held: Orders.Reader)",
    );
    expect(await orderSnapshot(e2e, orderId)).toEqual(before);
  });

  it("serve the dashboard's browser modules by name only: none of the app's other files, no path", async ({
    e2e,
  }) => {
    const tuning = await e2e.api("/api/dashboard/tuning.js", as(reader));
    expect(tuning.status).toBe(200);
    expect(tuning.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    // The app's own modules, the browser build's other outputs, and paths out of the folder.
    for (const name of [
      "index.js",
      "page.js",
      "tuning.d.ts",
      "..%2Fsrc%2Findex.js",
      "..%2F..%2Fpackage.json",
    ]) {
      const res = await e2e.api(`/api/dashboard/${name}`, as(reader));
      expect(res.status, name).toBe(404);
      expect(await res.text(), name).not.toContain("require(");
    }
  });

  it("record the signed-in operator in the audit trail, never a name the caller declares", async ({
    e2e,
  }) => {
    const order = e2eOrder("AUTH-CANCEL");
    await e2e.faults.add({ service: "inventory", orderId: order.orderId, kind: "hang" });
    expect((await e2e.submit(order)).status).toBe(202);
    await e2e.waitForState(order.orderId, ["Processing"]);
    const cancelled = await e2e.api(
      `/api/orders/${order.orderId}/cancel`,
      as(operator, {
        method: "POST",
        headers: { "content-type": "application/json", "x-operator": "mallory" },
        body: JSON.stringify({ reason: "customer called" }),
      }),
    );
    expect(cancelled.status).toBe(202);
    const state = (await (await e2e.api(`/api/orders/${order.orderId}`, as(operator))).json()) as {
      state: { history: Array<{ event: string; by: string; detail?: string }> };
    };
    const entry = state.state.history.find((h) => h.event === "compensationRequested");
    expect(entry).toMatchObject({ by: "operator:ada@contoso.com (oid-ada)", detail: "customer called" });
    expect(JSON.stringify(state)).not.toContain("mallory");
    await e2e.faults.clear();
  });

  it("refuse a principal header that is not one, and an action posted as a form", async ({
    e2e,
    orderId,
  }) => {
    for (const header of [
      "not base64!",
      Buffer.from("{}").toString("base64"),
      Buffer.from("[1]").toString("base64"),
    ]) {
      const res = await e2e.api("/api/stats", { headers: { "x-ms-client-principal": header } });
      expect(res.status, header).toBe(401);
      expect(await error(res), header).toMatch(/^x-ms-client-principal: /);
    }
    // What a cross-site form could send: no JSON content type, so a signed-in session cannot be ridden.
    const form = await e2e.api(
      `/api/orders/${orderId}/retry`,
      as(operator, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "a=1",
      }),
    );
    expect(form.status).toBe(415);
  });

  it("let an operator act", async ({ e2e, orderId }) => {
    const res = await e2e.api(`/api/orders/${orderId}/retry`, post(operator));
    expect(res.status).toBe(409);
    expect(await error(res)).toContain("this one is Processed");
  });
});

describe("routes for machines", () => {
  it("take a submission and answer its status without any principal", async ({ e2e }) => {
    const order = e2eOrder("MACHINE");
    const res = await e2e.submit(order);
    expect(res.status).toBe(202);
    const { statusUrl } = (await res.json()) as { statusUrl: string };
    expect(new URL(statusUrl).pathname).toBe(`/api/orders/${order.orderId}/status`);
    // Known from the 202 on, before the submission function has recorded its state (processState null then).
    const status = await fetch(statusUrl);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ orderId: order.orderId, statusMessages: expect.any(Array) });
    expect((await e2e.api("/api/health")).status).toBe(200);
  });

  it("are the only ones that take a function key: every person route is anonymous to the host and checks the principal", ({
    e2e,
  }) => {
    const levels = Object.fromEntries(
      [...e2e.host.app.functions.values()]
        .filter((r) => r.trigger.type === "httpTrigger")
        .map((r) => [r.name, r.trigger.authLevel]),
    );
    expect(levels).toEqual({
      "httpApi-submitOrder": "function",
      "httpApi-getOrderStatus": "function",
      "httpApi-listOrders": "anonymous",
      "httpApi-getOrder": "anonymous",
      "httpApi-getOrchestration": "anonymous",
      "httpApi-getOrderTrace": "anonymous",
      "httpApi-retryOrder": "anonymous",
      "httpApi-cancelOrder": "anonymous",
      "httpApi-bulkRetry": "anonymous",
      "httpApi-bulkCancel": "anonymous",
      "httpApi-stats": "anonymous",
      "httpApi-timings": "anonymous",
      "httpApi-health": "anonymous",
      dashboard: "anonymous",
      dashboardModule: "anonymous",
      // It describes the routes and who may call them: no secret.
      openApi: "anonymous",
    });
  });
});
