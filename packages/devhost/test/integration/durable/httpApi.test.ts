// The durable HTTP API as a user meets it on the devhost: the quickstart's HTTP starter returns the check-status
// response, and plain HTTP requests follow its URLs (/runtime/webhooks/durabletask/...), with the routes,
// status codes and shapes of the extension's HTTP API.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  fill,
  withKey,
  startApiHost,
  startThroughStarter,
  type ApiHost,
  type CheckStatus,
  type Status,
} from "../../support/durableApiApp";

let api: ApiHost;
let webhooks: string;
/** A webhook URL with the system key, as every caller of the API must send it. */
const hook = (pathAndQuery: string): string => withKey(`${webhooks}${pathAndQuery}`, api.host.durableKey);
beforeAll(async () => {
  api = await startApiHost();
  webhooks = `${api.host.url}/runtime/webhooks/durabletask`;
});
afterAll(() => api.dispose());

const approval = { approved: true, by: "ada" };

describe("the check-status response of an HTTP starter", () => {
  it("is a 202 whose Location is statusQueryGetUri, with every management URL on the webhooks path", async () => {
    const reply = await call<CheckStatus>("POST", `${api.host.url}/api/orchestrators/ApprovalWorkflow`, {
      item: "laptop",
    });
    expect(reply.status).toBe(202);
    const links = reply.body;
    expect(reply.headers.get("location")).toBe(links.statusQueryGetUri);
    expect(reply.headers.get("retry-after")).toBe("10");
    const instance = `${webhooks}/instances/${links.id}`;
    const query = `taskHub=ApiSamples&connection=Storage&code=${api.host.durableKey}`;
    expect(links).toEqual({
      id: links.id,
      statusQueryGetUri: `${instance}?${query}`,
      sendEventPostUri: `${instance}/raiseEvent/{eventName}?${query}`,
      terminatePostUri: `${instance}/terminate?reason={text}&${query}`,
      rewindPostUri: `${instance}/rewind?reason={text}&${query}`,
      purgeHistoryDeleteUri: `${instance}?${query}`,
      restartPostUri: `${instance}/restart?${query}`,
      suspendPostUri: `${instance}/suspend?reason={text}&${query}`,
      resumePostUri: `${instance}/resume?reason={text}&${query}`,
    });
    await call("POST", fill(links.terminatePostUri, "done"));
  });

  it("statusQueryGetUri answers 202 (Location, Retry-After) while it runs and 200 with the output after", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "laptop" });
    await api.idle();
    const running = await call<Status>("GET", links.statusQueryGetUri);
    expect(running.status).toBe(202);
    expect(running.headers.get("location")).toBe(links.statusQueryGetUri);
    expect(running.headers.get("retry-after")).toBe("5");
    expect(running.body).toMatchObject({
      name: "ApprovalWorkflow",
      instanceId: links.id,
      runtimeStatus: "Running",
      input: { item: "laptop" },
      output: null,
      customStatus: "waiting for approval",
    });
    expect((await call("POST", fill(links.sendEventPostUri, "Approval"), approval)).status).toBe(202);
    await api.idle();
    const done = await call<Status>("GET", links.statusQueryGetUri);
    expect(done.status).toBe(200);
    expect(done.headers.get("location")).toBeNull();
    expect(done.body).toMatchObject({ runtimeStatus: "Completed", output: "laptop: approved by ada" });
  });

  it("sendEventPostUri takes JSON only, and answers 404 for an unknown instance and 410 once it finished", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "desk" });
    await api.idle();
    const asText = await fetch(fill(links.sendEventPostUri, "Approval"), { method: "POST", body: "yes" });
    expect(asText.status).toBe(400);
    expect(await asText.text()).toContain("Only application/json");
    const unknown = fill(links.sendEventPostUri, "Approval").replace(links.id, "no-such-instance");
    expect((await call("POST", unknown, approval)).status).toBe(404);
    expect((await call("POST", fill(links.sendEventPostUri, "Approval"), approval)).status).toBe(202);
    await api.idle();
    expect((await call("POST", fill(links.sendEventPostUri, "Approval"), approval)).status).toBe(410);
  });

  it("terminatePostUri ends the instance with the reason as its output; once over, it answers 410", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "chair" });
    await api.idle();
    expect((await call("POST", fill(links.terminatePostUri, "no longer needed"))).status).toBe(202);
    await api.idle();
    const status = await call<Status>("GET", links.statusQueryGetUri);
    expect(status.body).toMatchObject({ runtimeStatus: "Terminated", output: "no longer needed" });
    expect((await call("POST", fill(links.terminatePostUri, "again"))).status).toBe(410);
  });

  it("purgeHistoryDeleteUri deletes a finished instance (200, then 404) and refuses a running one (409)", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "lamp" });
    await api.idle();
    expect((await call("DELETE", links.purgeHistoryDeleteUri)).status).toBe(409);
    await call("POST", fill(links.terminatePostUri, "cleanup"));
    await api.idle();
    expect(await call("DELETE", links.purgeHistoryDeleteUri)).toMatchObject({
      status: 200,
      body: { instancesDeleted: 1 },
    });
    expect((await call("DELETE", links.purgeHistoryDeleteUri)).status).toBe(404);
    expect((await call("GET", links.statusQueryGetUri)).status).toBe(404);
  });
});

describe("the status payload", () => {
  let links: CheckStatus;
  beforeAll(async () => {
    links = await startThroughStarter(api, "HelloCities", ["Tokyo", "Seattle", "London"]);
    await api.idle();
  });

  it("shows the history as historyEvents, in the extension's shape, with outputs when asked", async () => {
    const { body } = await call<Status>(
      "GET",
      `${links.statusQueryGetUri}&showHistory=true&showHistoryOutput=true`,
    );
    expect(body).not.toHaveProperty("history");
    const events = body.historyEvents ?? [];
    expect(events.map((e) => e.EventType)).toEqual([
      "ExecutionStarted",
      "TaskCompleted",
      "TaskCompleted",
      "TaskCompleted",
      "ExecutionCompleted",
    ]);
    expect(events[0]).toEqual({
      EventType: "ExecutionStarted",
      Timestamp: expect.any(String),
      FunctionName: "HelloCities",
      Input: '["Tokyo","Seattle","London"]',
    });
    expect(events[1]).toEqual({
      EventType: "TaskCompleted",
      Timestamp: expect.any(String),
      ScheduledTime: expect.any(String),
      FunctionName: "SayHello",
      Input: '"Tokyo"',
      Result: "Hello Tokyo!",
    });
    expect(events[4]).toEqual({
      EventType: "ExecutionCompleted",
      Timestamp: expect.any(String),
      OrchestrationStatus: "Completed",
      Result: ["Hello Tokyo!", "Hello Seattle!", "Hello London!"],
    });
  });

  it("leaves results out without showHistoryOutput, and inputs out with showInput=false", async () => {
    const plain = await call<Status>("GET", `${links.statusQueryGetUri}&showHistory=true`);
    expect(plain.body.historyEvents?.some((e) => "Result" in e)).toBe(false);
    const noInput = await call<Status>("GET", `${links.statusQueryGetUri}&showHistory=true&showInput=false`);
    expect(noInput.body.input).toBeNull();
    expect(noInput.body.historyEvents?.some((e) => "Input" in e)).toBe(false);
    expect((await call<Status>("GET", links.statusQueryGetUri)).body).not.toHaveProperty("historyEvents");
  });

  it("shows a pending timer as TimerCreated with its FireAt", async () => {
    const reminder = await startThroughStarter(api, "Reminder", "stand-up");
    await api.idle();
    const { body } = await call<Status>("GET", `${reminder.statusQueryGetUri}&showHistory=true`);
    expect(body.historyEvents?.map((e) => e.EventType)).toEqual(["ExecutionStarted", "TimerCreated"]);
    const fireAt = Date.parse(String(body.historyEvents?.[1]?.FireAt));
    expect(fireAt - Date.parse(body.createdTime)).toBe(60 * 60 * 1000);
    await call("POST", fill(reminder.terminatePostUri, "cleanup"));
  });
});

describe("the API's own routes", () => {
  it("starts with POST orchestrators/{name}/{id}: the check-status 202, without rewindPostUri as in the extension", async () => {
    const reply = await call<Record<string, string>>("POST", hook(`/orchestrators/HelloCities/cities-1`), [
      "Oslo",
    ]);
    expect(reply.status).toBe(202);
    expect(reply.body.id).toBe("cities-1");
    expect(reply.headers.get("location")).toBe(reply.body.statusQueryGetUri);
    expect(Object.keys(reply.body).sort()).toEqual(
      [
        "id",
        "purgeHistoryDeleteUri",
        "restartPostUri",
        "resumePostUri",
        "sendEventPostUri",
        "statusQueryGetUri",
        "suspendPostUri",
        "terminatePostUri",
      ].sort(),
    );
    await api.idle();
    expect((await call<Status>("GET", reply.body.statusQueryGetUri ?? "")).body.output).toEqual([
      "Hello Oslo!",
    ]);
  });

  it("with timeout and pollingInterval, the start waits: 200 with the output, or the check-status 202 in time", async () => {
    const finished = await call("POST", hook(`/orchestrators/HelloCities?timeout=10&pollingInterval=1`), [
      "Rome",
    ]);
    expect(finished).toMatchObject({ status: 200, body: ["Hello Rome!"] });
    const waiting = await call<CheckStatus>(
      "POST",
      hook(`/orchestrators/ApprovalWorkflow?timeout=0.2&pollingInterval=0.1`),
      { item: "pen" },
    );
    expect(waiting.status).toBe(202);
    expect(waiting.headers.get("location")).toBe(waiting.body.statusQueryGetUri);
    const tooFast = await call("POST", hook(`/orchestrators/HelloCities?timeout=1&pollingInterval=5`), []);
    expect(tooFast.status).toBe(400);
    await call("POST", fill(waiting.body.terminatePostUri, "cleanup"));
  });

  it("refuses an unknown orchestrator (400), a bad instance id (400) and invalid JSON (400)", async () => {
    expect((await call("POST", hook(`/orchestrators/NoSuchThing`))).status).toBe(400);
    expect((await call("POST", hook(`/orchestrators/HelloCities/%40at-sign`), [])).status).toBe(400);
    const bad = await fetch(hook(`/orchestrators/HelloCities`), { method: "POST", body: "[not json" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("not valid JSON");
  });

  it("lists instances with filters, and purges by filter (createdTimeFrom is required)", async () => {
    await api.idle();
    const list = await call<Status[]>(
      "GET",
      hook(
        `/instances?runtimeStatus=Completed&instanceIdPrefix=cities-&taskHub=ApiSamples&connection=Storage`,
      ),
    );
    expect(list.status).toBe(200);
    expect(list.body.map((s) => s.instanceId)).toEqual(["cities-1"]);
    expect((await call("DELETE", hook(`/instances?runtimeStatus=Completed`))).status).toBe(400);
    const purged = await call<{ instancesDeleted: number }>(
      "DELETE",
      hook(`/instances?createdTimeFrom=2000-01-01T00:00:00Z&runtimeStatus=Terminated`),
    );
    expect(purged.status).toBe(200);
    expect(purged.body.instancesDeleted).toBeGreaterThan(0);
    const left = await call<Status[]>("GET", hook(`/instances?runtimeStatus=Terminated`));
    expect(left.body).toEqual([]);
  });

  it("matches paths in any case and ignores taskHub and connection", async () => {
    const reply = await call<Status>(
      "GET",
      `${api.host.url}/runtime/webhooks/durableTask/Instances/cities-1?taskHub=ApiSamples&connection=Storage&code=${api.host.durableKey}`,
    );
    expect(reply).toMatchObject({ status: 200, body: { instanceId: "cities-1" } });
  });

  it("answers 404 for routes and methods it does not have", async () => {
    expect((await call("GET", hook(`/orchestrators/HelloCities`))).status).toBe(404);
    expect((await call("PUT", hook(`/instances/cities-1`))).status).toBe(404);
    expect((await call("POST", hook(`/instances/cities-1/explode`))).status).toBe(404);
    expect((await call("GET", hook(`/nothing-here`))).status).toBe(404);
  });
});

describe("entities", () => {
  const counter = (query = ""): string => hook(`/entities/Counter/c1${query}`);

  it("signals with POST ?op= (JSON input), reads the state with GET, and deletes with DELETE", async () => {
    expect((await call("POST", counter("?op=add"), 5)).status).toBe(202);
    expect((await call("POST", counter("?op=add"), 2)).status).toBe(202);
    await api.idle();
    expect(await call("GET", counter())).toMatchObject({ status: 200, body: 7 });
    expect((await call("DELETE", counter())).status).toBe(202);
    await api.idle();
    expect((await call("GET", counter())).status).toBe(404);
  });

  it("lists the entities of a name, with their state when fetchState=true", async () => {
    await call("POST", hook(`/entities/Counter/a?op=add`), 1);
    await call("POST", hook(`/entities/Counter/b?op=add`), 2);
    await api.idle();
    const plain = await call<Array<Record<string, unknown>>>("GET", hook(`/entities/Counter`));
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual([
      { entityId: { name: "counter", key: "a" }, lastOperationTime: expect.any(String), state: null },
      { entityId: { name: "counter", key: "b" }, lastOperationTime: expect.any(String), state: null },
    ]);
    const withState = await call<Array<{ state: unknown }>>("GET", hook(`/entities/counter?fetchState=true`));
    expect(withState.body.map((e) => e.state)).toEqual([1, 2]);
    expect((await call<unknown[]>("GET", hook(`/entities/Other`))).body).toEqual([]);
  });
});

describe("activities with extra inputs", () => {
  it("gives an activity the durable client it registered, which starts another orchestration", async () => {
    const started = await startThroughStarter(api, "HandOver", "Lisbon");
    await api.idle();
    const handOver = await call<Status>("GET", started.statusQueryGetUri);
    expect(handOver.body).toMatchObject({ runtimeStatus: "Completed", output: "follow-up-Lisbon" });
    const followUp = await call<Status>("GET", hook(`/instances/follow-up-Lisbon`));
    expect(followUp.body).toMatchObject({
      name: "HelloCities",
      runtimeStatus: "Completed",
      output: ["Hello Lisbon!"],
    });
  });
});

describe("the system key (durabletask_extension), which the webhooks require as the host does", () => {
  /** A management URL without its `code`. */
  const unkeyed = (url: string): string => url.replace(/&code=[^&]*/, "");

  it("answers 401 without the key, or with a wrong one, and the request never reaches the engine", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "desk" });
    await api.idle();
    const refused = [
      ["GET", links.statusQueryGetUri],
      ["POST", fill(links.sendEventPostUri, "Approval")],
      ["POST", fill(links.terminatePostUri, "stolen")],
      ["POST", fill(links.suspendPostUri, "stolen")],
      ["POST", links.restartPostUri],
      ["DELETE", links.purgeHistoryDeleteUri],
      ["GET", `${webhooks}/instances`],
      ["POST", `${webhooks}/orchestrators/HelloCities`],
      ["GET", `${webhooks}/entities/Counter`],
      ["POST", `${webhooks}/entities/Counter/stolen?op=add`],
    ] as const;
    for (const [method, url] of refused) {
      const init = {
        method,
        headers: { "content-type": "application/json" },
        body: method === "POST" ? "1" : null,
      };
      for (const attempt of [
        fetch(unkeyed(url), init),
        fetch(`${unkeyed(url)}${url.includes("?") ? "&" : "?"}code=not-the-key`, init),
        fetch(unkeyed(url), { ...init, headers: { ...init.headers, "x-functions-key": "not-the-key" } }),
      ]) {
        const reply = await attempt;
        expect([method, url, reply.status]).toEqual([method, url, 401]);
        expect(await reply.text()).toContain("durabletask_extension");
      }
    }
    await api.idle();
    expect(api.host.engine.getStatus(links.id)?.runtimeStatus).toBe("Running");
    expect(api.host.engine.readEntityState({ name: "Counter", key: "stolen" }).exists).toBe(false);
    await call("POST", fill(links.terminatePostUri, "cleanup"));
  });

  it("accepts the key as ?code= (in every URL the API hands out) or as x-functions-key", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "lamp" });
    expect(links.statusQueryGetUri).toContain(`code=${api.host.durableKey}`);
    expect((await fetch(links.statusQueryGetUri)).status).toBe(202);
    const byHeader = await fetch(unkeyed(links.statusQueryGetUri), {
      headers: { "x-functions-key": api.host.durableKey },
    });
    expect(byHeader.status).toBe(202);
    expect((await call("POST", fill(links.terminatePostUri, "cleanup"))).status).toBe(202);
  });

  it("is printed at start-up with the URL of the API, and that URL answers", async () => {
    const line = `Durable HTTP API (system key durabletask_extension): ${webhooks}/instances?code=${api.host.durableKey}`;
    expect(api.host.lines()).toContain(line);
    expect((await fetch(line.slice(line.indexOf("http://")))).status).toBe(200);
  });

  it("the app's port has no keyless /durabletask/: the client's RPC endpoint is a loopback port of its own", async () => {
    expect((await fetch(`${api.host.url}/durabletask/instances`)).status).toBe(404);
    const binding = api.host.durableClientData() as {
      rpcBaseUrl: string;
      requiredQueryStringParameters: string;
    };
    expect(binding.requiredQueryStringParameters).toBe(`code=${api.host.durableKey}`);
    const rpc = new URL(binding.rpcBaseUrl);
    expect(rpc.origin).not.toBe(api.host.url);
    expect(rpc.hostname).toBe("127.0.0.1");
    expect((await fetch(new URL("instances", rpc))).status).toBe(200);
    // A name that only resolves to loopback (DNS rebinding) is not loopback.
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      http
        .get({
          host: "127.0.0.1",
          port: rpc.port,
          path: "/durabletask/instances",
          headers: { host: "evil.example" },
        })
        .on("response", (res) => {
          res.resume();
          resolve(res.statusCode);
        })
        .on("error", reject);
    });
    expect(rebound).toBe(400);
  });
});
