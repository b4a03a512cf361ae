import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";

describe("devhost HTTP triggers", () => {
  let host: TestDevHost;

  beforeAll(async () => {
    host = await startTestDevHost("http-app");
  });

  afterAll(async () => {
    await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
  });

  it("lists the functions it found with their triggers, as func start does", () => {
    const hello = host.functions.find((f) => f.name === "hello");
    expect(hello?.description).toBe(`[GET,POST] ${host.url}/api/hello`);
    expect(host.functions.find((f) => f.name === "getOrder")?.description).toBe(
      `[GET] ${host.url}/api/orders/{orderId}`,
    );
    expect(host.functions.find((f) => f.name === "helloSequence")?.trigger).toBe("orchestrationTrigger");
    const listing = host.lines().find((l) => l.startsWith("Functions:"));
    expect(listing).toContain(`  getItem: [GET] ${host.url}/api/items/{id:int}`);
    expect(listing).toContain("  sayHello: activityTrigger");
  });

  it("passes query and body through the library's HttpRequest", async () => {
    const get = await fetch(`${host.url}/api/hello?name=Ada`);
    expect(get.status).toBe(200);
    expect(await get.text()).toBe("Hello, Ada!");
    const post = await fetch(`${host.url}/api/hello`, {
      method: "POST",
      body: JSON.stringify({ name: "Grace" }),
    });
    expect(await post.text()).toBe("Hello, Grace!");
  });

  it("matches route parameters, constraints, optional and catch-all segments", async () => {
    const order = await fetch(`${host.url}/api/orders/ORD-1%2F2`);
    expect(await order.json()).toEqual({ orderId: "ORD-1/2", function: "getOrder", hooked: "preInvocation" });
    expect(await (await fetch(`${host.url}/api/items/42`)).json()).toEqual({ id: 42, kind: "by-id" });
    expect(await (await fetch(`${host.url}/api/items/books`)).json()).toEqual({
      category: "books",
      kind: "list",
    });
    expect(await (await fetch(`${host.url}/api/items`)).json()).toEqual({ category: null, kind: "list" });
    expect(await (await fetch(`${host.url}/api/files/a/b/c.txt`)).json()).toEqual({ path: "a/b/c.txt" });
    // Route literals are case-insensitive in the host.
    expect((await fetch(`${host.url}/API/Items/7`)).status).toBe(200);
  });

  it("answers 404 for no route and 405 with Allow for a route registered with other methods", async () => {
    expect((await fetch(`${host.url}/api/nope`)).status).toBe(404);
    expect((await fetch(`${host.url}/api/items/12x34`)).status).toBe(404);
    expect((await fetch(`${host.url}/hello`)).status).toBe(404);
    const wrongMethod = await fetch(`${host.url}/api/orders/1`, { method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET");
  });

  it("returns status, headers, cookies and JSON body of the handler's response", async () => {
    const response = await fetch(`${host.url}/api/echo/t1?x=1&x=2&y=z`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ a: [1, 2] }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-echo-method")).toBe("PUT");
    expect(response.headers.get("content-type")).toBe("application/json");
    // As ASP.NET Core writes it for the host (hostBehaviour.test.ts has the details).
    expect(response.headers.get("set-cookie")).toBe("session=abc; path=/; httponly");
    const body = (await response.json()) as Record<string, unknown>;
    // A repeated name arrives as one value joined by "," (the host's query map), as in Azure.
    expect(body).toMatchObject({
      method: "PUT",
      tag: "t1",
      query: { x: "1,2", y: "z" },
      body: { a: [1, 2] },
    });
    expect(body.contentType).toBe("application/json");
  });

  it("answers 500 when the function throws and 204 when it returns nothing", async () => {
    expect((await fetch(`${host.url}/api/fails`)).status).toBe(500);
    const failure = host.logs.find((r) => r.functionName === "fails" && r.message.startsWith("Executed"));
    expect(failure?.message).toMatch(
      /^Executed 'Functions\.fails' \(Failed, Id=[0-9a-f-]{36}, Duration=\d+ms\)$/,
    );
    expect((await fetch(`${host.url}/api/nothing`)).status).toBe(204);
  });

  it("logs each invocation with name, invocation id, duration and outcome", async () => {
    const response = await fetch(`${host.url}/api/echo`, { method: "POST", body: "{}" });
    const { invocationId } = (await response.json()) as { invocationId: string };
    const lines = host.logs.filter((r) => r.invocationId === invocationId).map((r) => r.message);
    expect(lines[0]).toBe(
      `Executing 'Functions.echo' (Reason='This function was programmatically called via the host APIs.', Id=${invocationId})`,
    );
    expect(lines.at(-1)).toMatch(
      new RegExp(`^Executed 'Functions.echo' \\(Succeeded, Id=${invocationId}, Duration=\\d+ms\\)$`),
    );
  });

  it("runs appStart hooks before serving", async () => {
    expect(await (await fetch(`${host.url}/api/started`)).json()).toEqual({ appStarted: true });
  });

  it("redirects / to the dashboard route", async () => {
    const response = await fetch(`${host.url}/`, { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/api/dashboard");
  });

  it("fills the durable client input so an HTTP starter can run an orchestration", async () => {
    const response = await fetch(`${host.url}/api/hello-orchestration`, {
      method: "POST",
      body: JSON.stringify(["Tokyo", "Lima"]),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(["Hello, Tokyo!", "Hello, Lima!"]);
    expect(host.lines()).toContainEqual(expect.stringMatching(/^Executed 'Functions\.sayHello' \(Succeeded/));
  });
});
