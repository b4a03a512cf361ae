// Durable HTTP (context.df.callHttp) on the devhost against a small local service: the engine makes the call
// as the extension's built-in HTTP activity, answers with a DurableHttpResponse, and follows the 202 pattern
// (Location, Retry-After) with durable timers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../../src/durable";
import {
  call,
  startApiHost,
  startThroughStarter,
  type ApiHost,
  type Status,
} from "../../support/durableApiApp";

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The orchestration's virtual time when the request came in. */
  at: number;
}

let api: ApiHost;
let service: http.Server;
let base: string;
let seen: Seen[] = [];
let polls = 0;

// The service a workflow calls: a plain resource, an echo, a redirect, and long-running jobs that answer
// 202 with a Location to poll (with and without Retry-After).
function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  seen.push({
    method: req.method ?? "",
    path: req.url ?? "",
    headers: req.headers,
    body,
    at: api.clock.now().getTime(),
  });
  const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { "Content-Type": "application/json", ...headers }).end(JSON.stringify(value));
  };
  switch (`${req.method} ${req.url}`) {
    case "GET /ping":
      return json(200, { ok: true }, { "X-Request-Id": "req-42" });
    case "POST /echo":
      return json(201, {
        contentType: req.headers["content-type"] ?? null,
        token: req.headers["x-api-token"],
        body,
      });
    case "GET /moved":
      res.writeHead(302, { Location: "/ping" }).end();
      return;
    case "POST /jobs":
      return json(202, { queued: true }, { Location: `${base}/jobs/7/status`, "Retry-After": "2" });
    case "GET /jobs/7/status":
      polls++;
      return polls < 3
        ? json(202, { progress: polls }, { Location: `${base}/jobs/7/status`, "Retry-After": "2" })
        : json(200, { done: true, polls });
    case "POST /slow-jobs":
      return json(202, {}, { Location: `${base}/slow-jobs/1` });
    case "GET /slow-jobs/1":
      return json(200, { done: true });
    default:
      return json(404, { error: "no such thing" });
  }
}

beforeAll(async () => {
  api = await startApiHost();
  service = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await api.dispose();
  service.closeAllConnections();
  await new Promise<void>((resolve) => service.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
  polls = 0;
});

interface CallResult {
  statusCode?: number;
  headers?: Record<string, string | string[]>;
  content?: string;
  error?: string;
}

async function run(request: Record<string, unknown>): Promise<Status & { output: CallResult }> {
  const links = await startThroughStarter(api, "CallApi", request);
  await api.host.engine.runUntilIdle();
  return (await call<Status & { output: CallResult }>("GET", `${links.statusQueryGetUri}&showHistory=true`))
    .body;
}

describe("callHttp", () => {
  it("answers with statusCode, the response headers as the service named them, and the content", async () => {
    const done = await run({ method: "GET", url: `${base}/ping` });
    expect(done.runtimeStatus).toBe("Completed");
    expect(done.output).toMatchObject({ statusCode: 200, content: '{"ok":true}' });
    expect(done.output.headers?.["X-Request-Id"]).toBe("req-42");
    // .NET's HttpClient keeps content headers apart from the response headers, so the extension leaves them out.
    expect(Object.keys(done.output.headers ?? {}).map((k) => k.toLowerCase())).not.toContain("content-type");
    expect(done.historyEvents?.find((e) => e.EventType === "TaskCompleted")).toMatchObject({
      FunctionName: "BuiltIn::HttpActivity",
    });
  });

  it("sends the body (an object as JSON, as text/plain unless a Content-Type is given) and the headers", async () => {
    const done = await run({
      method: "POST",
      url: `${base}/echo`,
      body: { sku: "A-1", qty: 2 },
      headers: { "x-api-token": "t0k" },
    });
    expect(done.output.statusCode).toBe(201);
    expect(JSON.parse(done.output.content ?? "")).toEqual({
      contentType: "text/plain",
      token: "t0k",
      body: '{"sku":"A-1","qty":2}',
    });
    const typed = await run({
      method: "POST",
      url: `${base}/echo`,
      body: "a=1",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(JSON.parse(typed.output.content ?? "")).toMatchObject({
      contentType: "application/x-www-form-urlencoded",
    });
  });

  it("polls the Location of a 202 on durable timers, honouring Retry-After, until the job is done", async () => {
    const done = await run({
      method: "POST",
      url: `${base}/jobs`,
      headers: { Authorization: "Bearer abc", "x-functions-key": "function-key" },
    });
    expect(done.runtimeStatus).toBe("Completed");
    expect(done.output).toMatchObject({ statusCode: 200, content: JSON.stringify({ done: true, polls: 3 }) });
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /jobs",
      "GET /jobs/7/status",
      "GET /jobs/7/status",
      "GET /jobs/7/status",
    ]);
    // Each poll waits the Retry-After (2 s) of the answer before it.
    expect(seen.slice(1).map((r, i) => r.at - (seen[i] as Seen).at)).toEqual([2000, 2000, 2000]);
    // As in the extension: the original headers go along, except the function key.
    expect(seen[1]?.headers.authorization).toBe("Bearer abc");
    expect(seen[1]?.headers["x-functions-key"]).toBeUndefined();
    const kinds = (done.historyEvents ?? []).map((e) => e.EventType);
    expect(kinds.filter((k) => k === "TimerFired")).toHaveLength(3);
    expect(kinds.filter((k) => k === "TaskCompleted")).toHaveLength(4);
  });

  it("waits the host's default interval (30 s) when a 202 has no Retry-After", async () => {
    const links = await startThroughStarter(api, "CallApi", { method: "POST", url: `${base}/slow-jobs` });
    await api.idle();
    const [timer] = api.host.engine.pendingTimers().filter((t) => t.instanceId === links.id);
    expect(timer?.fireAt.getTime()).toBe(api.clock.now().getTime() + 30_000);
    await api.host.engine.runUntilIdle();
    const done = (await call<Status & { output: CallResult }>("GET", links.statusQueryGetUri)).body;
    expect(done.output).toMatchObject({ statusCode: 200, content: '{"done":true}' });
    expect((seen[1] as Seen).at - (seen[0] as Seen).at).toBe(30_000);
  });

  it("returns the 202 itself when polling is off (enablePolling / asynchronousPatternEnabled false)", async () => {
    const done = await run({ method: "POST", url: `${base}/jobs`, enablePolling: false });
    expect(done.output).toMatchObject({ statusCode: 202, content: '{"queued":true}' });
    expect(done.output.headers?.Location).toBe(`${base}/jobs/7/status`);
    expect(seen).toHaveLength(1);
  });

  it("follows redirects, as HttpClient does", async () => {
    const done = await run({ method: "GET", url: `${base}/moved` });
    expect(done.output).toMatchObject({ statusCode: 200, content: '{"ok":true}' });
  });

  it("gives error statuses back as answers, and fails the task (catchable) only without a response", async () => {
    expect((await run({ method: "GET", url: `${base}/missing` })).output.statusCode).toBe(404);
    const unreachable = await run({ method: "GET", url: "http://127.0.0.1:1/down" });
    expect(unreachable.runtimeStatus).toBe("Completed");
    expect(unreachable.output.error).toContain("GET http://127.0.0.1:1/down failed");
  });

  it("refuses a managed identity tokenSource, naming it, since only Azure can issue the token", async () => {
    const done = await run({
      method: "GET",
      url: `${base}/ping`,
      resource: "https://management.core.windows.net/.default",
    });
    expect(done.runtimeStatus).toBe("Failed");
    expect(String(done.output)).toContain("managed identity");
    expect(String(done.output)).toContain("https://management.core.windows.net/.default");
    expect(seen).toHaveLength(0);
  });

  it("fails the orchestration with the problem for a URL that is not absolute", async () => {
    const done = await run({ method: "GET", url: "/relative" });
    expect(done.runtimeStatus).toBe("Failed");
    expect(String(done.output)).toContain("'url' must be an absolute http or https URL");
  });
});

describe("a poll across a restart of the devhost", () => {
  it("waits out its Retry-After and polls on after the devhost starts again", async () => {
    const links = await startThroughStarter(api, "CallApi", { method: "POST", url: `${base}/jobs` });
    await api.idle();
    expect(seen.map((r) => r.path)).toEqual(["/jobs"]);
    const first = api;
    await first.stop();
    // The same task hub, and the clock where it stopped: the poll is still 2 s away.
    api = await startApiHost({ dataDir: first.host.dataDir, clock: new VirtualClock(first.clock.now()) });
    await api.idle();
    expect(seen).toHaveLength(1);
    await api.host.engine.runUntilIdle();
    const statusUrl = links.statusQueryGetUri.replace(first.host.url, api.host.url);
    const done = (await call<Status & { output: CallResult }>("GET", statusUrl)).body;
    expect(done.output).toMatchObject({ statusCode: 200, content: JSON.stringify({ done: true, polls: 3 }) });
    expect(seen.map((r) => r.path)).toEqual(["/jobs", "/jobs/7/status", "/jobs/7/status", "/jobs/7/status"]);
    expect((seen[1] as Seen).at - (seen[0] as Seen).at).toBe(2000);
  });
});
