// The durable-functions documentation samples, unmodified in spirit, produce the outputs their documentation
// states when run on the devhost engine (virtual clock).
import fs from "node:fs";
import path from "node:path";
import { HttpRequest } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durableRegistrations, invokeClientFunction } from "../../support/durableCapture";
import { startTestEngine, tempDataDir, type TestEngine } from "../../support/durableHost";

const samples = await import("../../support/apps/durableSamples");

let h: TestEngine;
beforeAll(async () => {
  h = await startTestEngine({ http: true });
});
afterAll(() => h.dispose());

it("registers only the durable functions (the client and HTTP functions stay with the host)", () => {
  const names = durableRegistrations().map((r) => `${r.kind}:${r.name}`);
  expect(names).toContain("orchestration:E1_HelloSequence");
  expect(names).toContain("activity:E1_SayHello");
  expect(names).toContain("entity:Counter");
  expect(names.some((n) => n.endsWith(":DurableFunctionsHttpStart") || n.endsWith(":SamplesPing"))).toBe(
    false,
  );
});

describe("function chaining: E1_HelloSequence", () => {
  it("returns the three greetings, started through the quickstart's HTTP starter", async () => {
    const request = new HttpRequest({
      method: "POST",
      url: `${h.baseUrl}/api/orchestrators/E1_HelloSequence`,
      params: { orchestratorName: "E1_HelloSequence" },
    });
    const response = await invokeClientFunction(
      "DurableFunctionsHttpStart",
      request,
      h.engine.clientBindingData(h.baseUrl),
    );
    expect(response.status).toBe(202);
    const links = (await response.json()) as { id: string; statusQueryGetUri: string };
    await h.engine.whenIdle();
    const status = await fetch(links.statusQueryGetUri);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({
      runtimeStatus: "Completed",
      output: ["Hello Tokyo!", "Hello Seattle!", "Hello London!"],
    });
  });
});

describe("fan-out/fan-in: E2_BackupSiteContent", () => {
  it("copies every file in parallel and returns the total number of bytes", async () => {
    const root = tempDataDir("site-");
    const files = {
      "index.html": "<h1>hi</h1>",
      "css/site.css": "body{}".repeat(50),
      "img/logo.svg": "x".repeat(1234),
    };
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), content);
    }
    try {
      const id = h.engine.startNew("E2_BackupSiteContent", { input: root });
      await h.engine.whenIdle();
      const total = Object.values(files).reduce((n, c) => n + Buffer.byteLength(c), 0);
      expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: total });
      for (const [rel, content] of Object.entries(files)) {
        expect(fs.readFileSync(path.join(`${root}.backup`, rel), "utf8")).toBe(content);
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(`${root}.backup`, { recursive: true, force: true });
    }
  });
});

describe("human interaction: E4_SmsPhoneVerification", () => {
  const codeFor = (phone: string): number => {
    const sms = samples.smsOutbox.filter((s) => s.phoneNumber === phone).at(-1);
    if (!sms) throw new Error(`no SMS sent to ${phone}`);
    return sms.code;
  };

  it("returns true when the right code arrives in time (after a wrong one), and cancels its timer", async () => {
    const id = h.engine.startNew("E4_SmsPhoneVerification", { input: "+1 555 0100" });
    await h.engine.whenIdle();
    const code = codeFor("+1 555 0100");
    h.engine.raiseEvent(id, "SmsChallengeResponse", code + 1);
    await h.clock.advance(30 * 1000);
    h.engine.raiseEvent(id, "SmsChallengeResponse", code);
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: true });
    expect(h.engine.pendingTimers().filter((t) => t.instanceId === id)).toEqual([]);
  });

  it("returns false when the 90 seconds run out", async () => {
    const id = h.engine.startNew("E4_SmsPhoneVerification", { input: "+1 555 0101" });
    await h.engine.whenIdle();
    await h.clock.advance(89 * 1000);
    expect(h.engine.getStatus(id)?.runtimeStatus).toBe("Running");
    await h.clock.advance(1000);
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: false });
  });
});

describe("human interaction: approval with a 72-hour escalation timer", () => {
  it("processes the approval when it arrives first; the timer never fires", async () => {
    const id = h.engine.startNew("ApprovalWorkflow");
    await h.engine.whenIdle();
    await h.clock.advance(5 * 60 * 60 * 1000);
    h.engine.raiseEvent(id, "ApprovalEvent", { approver: "Jane" });
    const clockBefore = h.clock.now().getTime();
    await h.engine.runUntilIdle();
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: "approved" });
    expect(samples.approvals).toContainEqual({ kind: "approved", detail: { approver: "Jane" } });
    expect(h.clock.now().getTime()).toBe(clockBefore); // no pending timer left to jump to
  });

  it("escalates when the timer wins", async () => {
    const id = h.engine.startNew("ApprovalWorkflow");
    const escalationsBefore = samples.approvals.filter((a) => a.kind === "escalated").length;
    await h.engine.runUntilIdle();
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: "escalated" });
    expect(samples.approvals.filter((a) => a.kind === "escalated")).toHaveLength(escalationsBefore + 1);
  });
});

describe("automatic retry: callActivityWithRetry", () => {
  it("succeeds on the third attempt, 5 s apart", async () => {
    const start = h.clock.now().getTime();
    const id = h.engine.startNew("CallActivityWithRetry", { input: { key: "twice", failures: 2 } });
    await h.engine.runUntilIdle();
    const status = h.engine.getStatus(id, { showHistory: true });
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: { attempts: 3 } });
    expect(Date.parse(status?.lastUpdatedTime ?? "") - start).toBe(10_000);
  });

  it("fails the orchestration with the activity's error after three attempts", async () => {
    const id = h.engine.startNew("CallActivityWithRetry", { input: { key: "always", failures: 99 } });
    await h.engine.runUntilIdle();
    const status = h.engine.getStatus(id);
    expect(status?.runtimeStatus).toBe("Failed");
    expect(String(status?.output)).toContain("transient failure #3");
  });
});

describe("durable entity: Counter", () => {
  it("adds, resets and reads through the durable client, and answers an orchestration's call", async () => {
    const client = h.client();
    const { EntityId } = await import("durable-functions");
    const counter = new EntityId("Counter", "myCounter");
    await client.signalEntity(counter, "add", 5);
    await client.signalEntity(counter, "add", 2);
    await h.engine.whenIdle();
    expect((await client.readEntityState<number>(counter)).entityState).toBe(7);
    await client.signalEntity(counter, "reset");
    await client.signalEntity(counter, "add", 3);
    await h.engine.whenIdle();
    expect(await client.readEntityState<number>(counter)).toMatchObject({
      entityExists: true,
      entityState: 3,
    });

    const id = h.engine.startNew("CounterOrchestration", { input: "myCounter" });
    await h.engine.whenIdle();
    expect(h.engine.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: 3 });
    expect((await client.readEntityState<number>(counter)).entityState).toBe(4); // the orchestration's signal
    expect((await client.readEntityState(new EntityId("Counter", "never-used"))).entityExists).toBe(false);
  });
});
