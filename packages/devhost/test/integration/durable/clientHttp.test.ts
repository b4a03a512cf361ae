// The durable client of durable-functions (df.getClient, unchanged) against the engine's HTTP API over
// real HTTP on 127.0.0.1.
import * as df from "durable-functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../../support/durableCapture";
import { startTestEngine, type TestEngine } from "../../support/durableHost";

await import("../../support/apps/durableFeatures");

let h: TestEngine;
let client: df.DurableClient;

beforeAll(async () => {
  // A small page size makes the client follow x-ms-continuation-token for any list over 2 instances.
  h = await startTestEngine({ http: true, rpcPageSize: 2 });
  client = h.client();
});
afterAll(() => h.dispose());

describe("instance lifecycle through df.getClient", () => {
  it("starts with an id and input, reports status with input/output, takes events, completes", async () => {
    const id = await client.startNew("F_Events", { instanceId: "client-events", input: { note: "hi" } });
    expect(id).toBe("client-events");
    await client.raiseEvent(id, "Add", 2);
    await h.engine.whenIdle();
    const running = await client.getStatus(id);
    expect(running).toMatchObject({
      name: "F_Events",
      instanceId: id,
      runtimeStatus: "Running",
      input: { note: "hi" },
      output: null,
    });
    await client.raiseEvent(id, "Add", 3);
    await client.raiseEvent(id, "Add", 4);
    await h.engine.whenIdle();
    const done = await client.getStatus(id, { showHistory: true, showHistoryOutput: true });
    expect(done).toMatchObject({ runtimeStatus: "Completed", output: 9 });
    // The extension sends the history as `historyEvents`; durable-functions 3.5 copies only `history` into
    // its status object, so there it stays undefined, as against Azure.
    expect(done.history).toBeUndefined();
    const raw = await fetch(
      `${h.baseUrl}/durabletask/instances/${id}?showHistory=true&showHistoryOutput=true`,
    );
    const { historyEvents } = (await raw.json()) as { historyEvents: Array<{ EventType: string }> };
    expect(historyEvents.map((e) => e.EventType)).toEqual([
      "ExecutionStarted",
      "TaskCompleted",
      "EventRaised",
      "EventRaised",
      "EventRaised",
      "ExecutionCompleted",
    ]);
  });

  it("generates an id when none is given and refuses a second start of a running id", async () => {
    const id = await client.startNew("F_WaitForever");
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    await expect(client.startNew("F_WaitForever", { instanceId: id })).rejects.toThrow(/409.*already exists/);
    await client.terminate(id, "cleanup");
  });

  it("answers 404 for unknown instances and ignores events for finished ones (410)", async () => {
    await expect(client.getStatus("nope")).rejects.toThrow(/404/);
    await expect(client.raiseEvent("nope", "Add", 1)).rejects.toThrow(/No instance with ID 'nope' found/);
    await expect(client.terminate("nope", "x")).rejects.toThrow(/No instance with ID 'nope' found/);
    await h.engine.whenIdle();
    await expect(client.raiseEvent("client-events", "Add", 1)).resolves.toBeUndefined(); // 410 is not an error
  });

  it("terminates with a reason, then purges the history (but never purges a running instance)", async () => {
    const id = await client.startNew("F_WaitForever", { instanceId: "client-term" });
    await h.engine.whenIdle();
    await expect(client.purgeInstanceHistory(id)).rejects.toThrow(/409.*terminate it before purging/);
    await client.terminate(id, "no longer needed");
    await h.engine.whenIdle();
    expect(await client.getStatus(id)).toMatchObject({
      runtimeStatus: "Terminated",
      output: "no longer needed",
    });
    expect((await client.purgeInstanceHistory(id)).instancesDeleted).toBe(1);
    expect((await client.purgeInstanceHistory(id)).instancesDeleted).toBe(0);
    await expect(client.getStatus(id)).rejects.toThrow(/404/);
  });

  it("waitForCompletionOrCreateCheckStatusResponse returns the output of a finished instance", async () => {
    const id = await client.startNew("F_Deterministic");
    const request = new (await import("@azure/functions")).HttpRequest({
      method: "POST",
      url: `${h.baseUrl}/api/x`,
    });
    const response = await client.waitForCompletionOrCreateCheckStatusResponse(request, id, {
      timeoutInMilliseconds: 5000,
      retryIntervalInMilliseconds: 20,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { guid: string }).guid).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("queries", () => {
  const ids = ["q-a1", "q-a2", "q-a3", "q-b1", "q-b2"];
  let between: Date;

  beforeAll(async () => {
    for (const [i, id] of ids.entries()) {
      await client.startNew(i < 3 ? "F_Deterministic" : "F_WaitForever", { instanceId: id });
      if (i === 2) {
        await h.clock.advance(60_000);
        between = h.clock.now();
        await h.clock.advance(60_000);
      }
    }
    await h.engine.whenIdle();
  });

  const idsOf = (list: df.DurableOrchestrationStatus[]): string[] =>
    list
      .map((s) => s.instanceId)
      .filter((id) => id.startsWith("q-"))
      .sort();

  it("lists everything across pages (the client follows continuation tokens)", async () => {
    expect(idsOf(await client.getStatusAll())).toEqual(ids);
  });

  it("filters by runtime status and creation time", async () => {
    const running = await client.getStatusBy({ runtimeStatus: [df.OrchestrationRuntimeStatus.Running] });
    expect(idsOf(running)).toEqual(["q-b1", "q-b2"]);
    const late = await client.getStatusBy({ createdTimeFrom: between });
    expect(idsOf(late)).toEqual(["q-b1", "q-b2"]);
    const early = await client.getStatusBy({
      createdTimeTo: between,
      runtimeStatus: [df.OrchestrationRuntimeStatus.Completed],
    });
    expect(idsOf(early)).toEqual(["q-a1", "q-a2", "q-a3"]);
  });

  it("filters by instance id prefix and pages by hand over HTTP", async () => {
    const first = await fetch(`${h.baseUrl}/durabletask/instances/?instanceIdPrefix=q-a&top=2`);
    const token = first.headers.get("x-ms-continuation-token");
    expect(((await first.json()) as Array<{ instanceId: string }>).map((s) => s.instanceId)).toEqual([
      "q-a1",
      "q-a2",
    ]);
    expect(token).toBeTruthy();
    const second = await fetch(`${h.baseUrl}/durabletask/instances/?instanceIdPrefix=q-a&top=2`, {
      headers: { "x-ms-continuation-token": token ?? "" },
    });
    expect(second.headers.get("x-ms-continuation-token")).toBeNull();
    expect(((await second.json()) as Array<{ instanceId: string }>).map((s) => s.instanceId)).toEqual([
      "q-a3",
    ]);
  });

  it("rejects a bad filter with a message naming it", async () => {
    const response = await fetch(`${h.baseUrl}/durabletask/instances/?runtimeStatus=Sleeping`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain("runtimeStatus");
  });

  it("purges finished instances by filter and leaves running ones", async () => {
    const result = await client.purgeInstanceHistoryBy({
      createdTimeFrom: new Date(0),
      runtimeStatus: [df.OrchestrationRuntimeStatus.Completed, df.OrchestrationRuntimeStatus.Running],
    });
    expect(result.instancesDeleted).toBeGreaterThanOrEqual(3);
    expect(idsOf(await client.getStatusAll())).toEqual(["q-b1", "q-b2"]);
  });
});
