// Suspend, resume, rewind and restart on the devhost, through the management URLs of the check-status
// response and through the durable client's own methods (client.suspend, resume, rewind, getStatus), with
// the semantics and status codes of the extension.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  fill,
  startApiHost,
  startThroughStarter,
  type ApiHost,
  type CheckStatus,
  type Status,
} from "../../support/durableApiApp";

let api: ApiHost;
beforeAll(async () => {
  api = await startApiHost();
});
afterAll(() => api.dispose());

const status = async (links: CheckStatus, query = ""): Promise<Status> =>
  (await call<Status>("GET", `${links.statusQueryGetUri}${query}`)).body;
const history = async (links: CheckStatus): Promise<string[]> =>
  ((await status(links, "&showHistory=true")).historyEvents ?? []).map((e) => e.EventType);
const attempts = async (key: string): Promise<number> =>
  (await call<number>("GET", `${api.host.url}/api/attempts/${key}`)).body;
const manage = (action: string, id: string, reason = ""): Promise<{ status: number; body: unknown }> =>
  call(action === "status" ? "GET" : "POST", `${api.host.url}/api/manage/${action}/${id}?reason=${reason}`);

describe("suspend and resume", () => {
  it("buffers an event that arrives while suspended and delivers it on resume", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "monitor" });
    await api.idle();
    expect((await call("POST", fill(links.suspendPostUri, "maintenance"))).status).toBe(202);
    await api.idle();
    const suspended = await call<Status>("GET", links.statusQueryGetUri);
    expect(suspended.status).toBe(202);
    expect(suspended.body.runtimeStatus).toBe("Suspended");

    expect(
      (await call("POST", fill(links.sendEventPostUri, "Approval"), { approved: true, by: "lin" })).status,
    ).toBe(202);
    await api.idle();
    expect(await status(links)).toMatchObject({ runtimeStatus: "Suspended", output: null });
    expect(await history(links)).not.toContain("EventRaised");
    // As in the extension: suspending a suspended instance is refused (an InvalidOperationException, 500).
    expect((await call("POST", fill(links.suspendPostUri, "again"))).status).toBe(500);

    expect((await call("POST", fill(links.resumePostUri, "back"))).status).toBe(202);
    await api.idle();
    const done = await call<Status>("GET", `${links.statusQueryGetUri}&showHistory=true`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ runtimeStatus: "Completed", output: "monitor: approved by lin" });
    const events = done.body.historyEvents ?? [];
    expect(events.map((e) => e.EventType)).toEqual([
      "ExecutionStarted",
      "ExecutionSuspended",
      "ExecutionResumed",
      "EventRaised",
      "TaskCompleted",
      "ExecutionCompleted",
    ]);
    expect(events[1]).toMatchObject({ Reason: "maintenance" });
    expect(events[2]).toMatchObject({ Reason: "back" });
  });

  it("keeps a timer that fires while suspended until the resume", async () => {
    const links = await startThroughStarter(api, "Reminder", "water the plants");
    await api.idle();
    await call("POST", fill(links.suspendPostUri, "holiday"));
    await api.idle();
    await api.clock.advance(2 * 60 * 60 * 1000);
    expect(api.host.engine.pendingTimers().filter((t) => t.instanceId === links.id)).toEqual([]);
    expect(await status(links)).toMatchObject({ runtimeStatus: "Suspended", output: null });
    await call("POST", fill(links.resumePostUri, "home again"));
    await api.idle();
    expect(await status(links)).toMatchObject({
      runtimeStatus: "Completed",
      output: "reminded: water the plants",
    });
  });

  it("answers 410 for a finished instance and 500 when resuming one that is not suspended", async () => {
    const running = await startThroughStarter(api, "ApprovalWorkflow", { item: "cable" });
    await api.idle();
    expect((await call("POST", fill(running.resumePostUri, "x"))).status).toBe(500);
    await call("POST", fill(running.terminatePostUri, "cleanup"));
    await api.idle();
    expect((await call("POST", fill(running.suspendPostUri, "x"))).status).toBe(410);
    expect((await call("POST", fill(running.resumePostUri, "x"))).status).toBe(410);
    const unknown = fill(running.suspendPostUri, "x").replace(running.id, "nobody");
    expect((await call("POST", unknown)).status).toBe(404);
  });

  it("works through client.suspend and client.resume", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "mouse" });
    await api.idle();
    expect((await manage("suspend", links.id, "audit")).status).toBe(202);
    await api.idle();
    await call("POST", fill(links.sendEventPostUri, "Approval"), { approved: false, by: "kim" });
    await api.idle();
    const viaClient = await manage("status", links.id);
    expect(viaClient.body).toMatchObject({ runtimeStatus: "Suspended" });
    // durable-functions reads `history`, the extension sends `historyEvents`: the client's copy has none.
    expect(viaClient.body).not.toHaveProperty("history");
    expect((await manage("resume", links.id, "audit done")).status).toBe(202);
    await api.idle();
    expect(await status(links)).toMatchObject({
      runtimeStatus: "Completed",
      output: "mouse: rejected by kim",
    });
    expect((await manage("resume", links.id)).status).toBe(202); // the client treats 410 as done
  });
});

describe("rewind", () => {
  it("retries the activity that failed and completes, running the rest once", async () => {
    const links = await startThroughStarter(api, "ProcessOrder", { id: "o-1", amount: 30 });
    await api.idle();
    const failed = await status(links);
    expect(failed.runtimeStatus).toBe("Failed");
    expect(String(failed.output)).toContain("card declined for order o-1");
    expect([await attempts("charge:o-1"), await attempts("ship:o-1")]).toEqual([1, 0]);

    expect((await call("POST", fill(links.rewindPostUri, "payment service is back"))).status).toBe(202);
    await api.idle();
    const done = await call<Status>("GET", `${links.statusQueryGetUri}&showHistory=true`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      runtimeStatus: "Completed",
      output: { receipt: "charged 30 for o-1", shipment: "shipped o-1" },
    });
    expect([await attempts("charge:o-1"), await attempts("ship:o-1")]).toEqual([2, 1]);
    const events = done.body.historyEvents ?? [];
    expect(events.map((e) => e.EventType)).toEqual([
      "ExecutionStarted",
      "GenericEvent",
      "TaskCompleted",
      "TaskCompleted",
      "ExecutionCompleted",
    ]);
    expect(events[1]).toMatchObject({ Data: "payment service is back" });
    expect((await call("POST", fill(links.rewindPostUri, "again"))).status).toBe(410);
  });

  it("rewinds a failed sub-orchestration with its parent, through client.rewind", async () => {
    const links = await startThroughStarter(api, "ProcessBatch", [
      { id: "b-1", amount: 10 },
      { id: "b-2", amount: 20 },
    ]);
    await api.idle();
    expect((await status(links)).runtimeStatus).toBe("Failed");
    const child = `${links.id}:0000`;
    expect(api.host.engine.getStatus(child)?.runtimeStatus).toBe("Failed");

    expect((await manage("rewind", links.id, "retry batch")).status).toBe(202);
    await api.idle();
    // b-1 went through on its second try; b-2's card is declined the first time too.
    expect(api.host.engine.getStatus(child)?.runtimeStatus).toBe("Completed");
    const second = await status(links);
    expect(second.runtimeStatus).toBe("Failed");
    expect(String(second.output)).toContain("card declined for order b-2");

    expect((await manage("rewind", links.id, "retry batch again")).status).toBe(202);
    await api.idle();
    expect(await status(links)).toMatchObject({
      runtimeStatus: "Completed",
      output: [
        { receipt: "charged 10 for b-1", shipment: "shipped b-1" },
        { receipt: "charged 20 for b-2", shipment: "shipped b-2" },
      ],
    });
    expect(api.host.engine.getStatus(`${links.id}:0001`)?.runtimeStatus).toBe("Completed");
    expect([await attempts("charge:b-1"), await attempts("ship:b-1"), await attempts("charge:b-2")]).toEqual([
      2, 1, 2,
    ]);
  });

  it("refuses an instance that has not failed: 500 while it runs (as the extension), 404 when unknown", async () => {
    const links = await startThroughStarter(api, "ApprovalWorkflow", { item: "badge" });
    await api.idle();
    const running = await call<{ error: string }>("POST", fill(links.rewindPostUri, "x"));
    expect(running.status).toBe(500);
    expect(running.body.error).toContain("only supported on failed orchestration instances");
    expect((await call("POST", fill(links.rewindPostUri, "x").replace(links.id, "nobody"))).status).toBe(404);
    await call("POST", fill(links.terminatePostUri, "cleanup"));
  });
});

describe("restart", () => {
  let links: CheckStatus;
  beforeAll(async () => {
    links = await startThroughStarter(api, "HelloCities", ["Lima", "Quito"]);
    await api.idle();
  });

  it("runs the orchestrator again with the same input under a new id, and answers the check-status 202", async () => {
    const reply = await call<CheckStatus>("POST", links.restartPostUri);
    expect(reply.status).toBe(202);
    expect(reply.body.id).not.toBe(links.id);
    expect(reply.headers.get("location")).toBe(reply.body.statusQueryGetUri);
    await api.idle();
    expect(await status(reply.body)).toMatchObject({
      name: "HelloCities",
      runtimeStatus: "Completed",
      input: ["Lima", "Quito"],
      output: ["Hello Lima!", "Hello Quito!"],
    });
    expect((await status(links)).runtimeStatus).toBe("Completed");
  });

  it("keeps the id with restartWithNewInstanceId=false: a fresh run with a fresh history", async () => {
    await api.clock.advance(60_000);
    const before = await status(links);
    const reply = await call<CheckStatus>("POST", `${links.restartPostUri}&restartWithNewInstanceId=false`);
    expect(reply.status).toBe(202);
    expect(reply.body.id).toBe(links.id);
    await api.idle();
    const after = await status(links, "&showHistory=true");
    expect(after).toMatchObject({ runtimeStatus: "Completed", output: ["Hello Lima!", "Hello Quito!"] });
    expect(Date.parse(after.createdTime)).toBeGreaterThan(Date.parse(before.createdTime));
    expect(after.historyEvents?.filter((e) => e.EventType === "ExecutionStarted")).toHaveLength(1);
  });

  it("answers 400 for an unknown instance and 409 for restarting a running id in place", async () => {
    expect((await call("POST", links.restartPostUri.replace(links.id, "nobody"))).status).toBe(400);
    const running = await startThroughStarter(api, "ApprovalWorkflow", { item: "stapler" });
    await api.idle();
    expect((await call("POST", `${running.restartPostUri}&restartWithNewInstanceId=false`)).status).toBe(409);
    await call("POST", fill(running.terminatePostUri, "cleanup"));
  });
});
