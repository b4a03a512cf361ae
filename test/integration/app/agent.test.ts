/**
 * An agent end to end against the embedded Service Bus emulator and the remote services simulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agentRequestId, idempotencyKeyFor, type AgentRequest } from "../../../src/domain";
import { handleAgentRequest } from "../../../src/agents/agent";
import { drain, startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
let n = 0;

beforeAll(async () => {
  stack = await startAppStack({ AGENT_MAX_ATTEMPTS: "3", AGENT_ATTEMPT_TIMEOUT_SECONDS: "1" });
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  await fetch(`${stack.emulators.simulatorUrl}/_ledger`, { method: "DELETE" });
});

function request(overrides: Partial<AgentRequest> = {}, body: Record<string, unknown> = {}): AgentRequest {
  const orderId = `AG-${++n}`;
  const instanceId = `${orderId}:1`;
  return {
    requestId: agentRequestId(instanceId, 1, "do"),
    orderId,
    instanceId,
    stepIndex: 1,
    step: "chargePayment",
    kind: "do",
    payload: { operation: "charge", body: { orderId, amount: 12.5, currency: "EUR", ...body } },
    completeBy: new Date(Date.now() + 10_000).toISOString(),
    idempotencyKey: idempotencyKeyFor(orderId, "chargePayment", "do"),
    ...overrides,
  };
}

async function ledger(): Promise<Array<{ idempotencyKey: string; applied: boolean; requests: number }>> {
  const res = await fetch(`${stack.emulators.simulatorUrl}/_ledger`);
  return (
    (await res.json()) as { entries: Array<{ idempotencyKey: string; applied: boolean; requests: number }> }
  ).entries;
}

describe("agent", () => {
  it("calls the service with the idempotency key and replies ok with the request's MessageId", async () => {
    const req = request();
    const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", req);
    expect(outcome).toMatchObject({
      kind: "replied",
      calls: 1,
      reply: { outcome: "ok", requestId: req.requestId },
    });
    const receiver = stack.bus.createReceiver("agent-replies", { receiveMode: "receiveAndDelete" });
    const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
    await receiver.close();
    expect(message?.messageId).toBe(req.requestId);
    expect(message?.body).toMatchObject({ outcome: "ok", result: { chargeId: expect.any(String) } });
    expect(await ledger()).toEqual([
      expect.objectContaining({ idempotencyKey: req.idempotencyKey, applied: true }),
    ]);
  });

  it("replies permanent on a business refusal", async () => {
    const outcome = await handleAgentRequest(
      stack.deps,
      stack.context(),
      "payment",
      request({}, { amount: 1_000_000 }),
    );
    expect(outcome).toMatchObject({
      kind: "replied",
      calls: 1,
      reply: { outcome: "permanent", error: { code: "PaymentDeclined" } },
    });
    await drain(stack.bus, "agent-replies");
  });

  it("makes at most AGENT_MAX_ATTEMPTS calls to a service that always fails, then replies transient", async () => {
    await fetch(`${stack.emulators.simulatorUrl}/_faults`, {
      method: "POST",
      body: JSON.stringify({ service: "payment", kind: "transient" }),
    });
    const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", request());
    expect(outcome).toMatchObject({ kind: "replied", calls: 3, reply: { outcome: "transient" } });
    await fetch(`${stack.emulators.simulatorUrl}/_faults`, { method: "DELETE" });
    await drain(stack.bus, "agent-replies");
  });

  it("drops a request whose deadline has passed, without calling the service or replying", async () => {
    const outcome = await handleAgentRequest(
      stack.deps,
      stack.context(),
      "payment",
      request({ completeBy: new Date(Date.now() - 1).toISOString() }),
    );
    expect(outcome).toEqual({
      kind: "dropped",
      reason: "deadline passed before the call",
      calls: 0,
      injected: 0,
    });
    expect(await ledger()).toEqual([]);
    expect(await drain(stack.bus, "agent-replies")).toEqual([]);
  });

  it("alerts on a malformed request and names the bad field", async () => {
    const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", {
      ...request(),
      stepIndex: "one",
    });
    expect(outcome).toMatchObject({ kind: "invalid", reason: expect.stringContaining("stepIndex") });
    const alerts = await drain(stack.bus, "alerts");
    expect(alerts).toEqual([
      expect.objectContaining({ kind: "InvalidMessage", reason: expect.stringContaining("stepIndex") }),
    ]);
  });
});
