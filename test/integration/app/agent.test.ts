/**
 * An agent end to end against the embedded Service Bus emulator and the remote services simulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  agentRequestId,
  andThen,
  dispatchedRequest,
  idempotencyKeyFor,
  orderWorkflowV1,
  stepDispatched,
  stepSucceeded,
  type AgentRequest,
} from "../../../src/domain";
import { handleAgentRequest } from "../../../src/agents/agent";
import { drain, startAppStack, type AppStack } from "../../support/appStack";
import { dispatchedStep } from "../../support/dispatch";
import { sampleOrder } from "../../support/domain";

let stack: AppStack;
let n = 0;
/** Every request the Cosmos DB stand-in received, as "METHOD url". */
const storeRequests: string[] = [];

/** The requests to the state and orders containers that `run` made: what checking a request costs the agent. */
async function recordAndOrderRequests(run: () => Promise<unknown>): Promise<string[]> {
  const before = storeRequests.length;
  await run();
  return storeRequests
    .slice(before)
    .filter((r) => /\/colls\/(state|orders)\//.test(r))
    .map((r) => r.replace(/^(\w+) .*\/colls\/(\w+)\/.*$/, "$1 $2"));
}

beforeAll(async () => {
  stack = await startAppStack(
    { AGENT_MAX_ATTEMPTS: "3", AGENT_ATTEMPT_TIMEOUT_SECONDS: "1" },
    { onCosmosRequest: (request) => storeRequests.push(`${request.method} ${request.url}`) },
  );
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  await fetch(`${stack.emulators.simulatorUrl}/_ledger`, { method: "DELETE" });
});

/** The payment step of a new order of `unitPrice`, dispatched by its record: the request the Scheduler sends. */
function request(
  unitPrice = 12.5,
  dispatch: Parameters<typeof dispatchedStep>[3] = {},
): Promise<AgentRequest> {
  const order = sampleOrder({ orderId: `AG-${++n}`, items: [{ sku: "SKU-1", quantity: 1, unitPrice }] });
  return dispatchedStep(stack.deps, order, 1, dispatch);
}

/** Step `stepIndex - 1` of the order's attempt 1 succeeds and step `stepIndex` is dispatched, in this instance. */
async function continueTo(orderId: string, stepIndex: number): Promise<AgentRequest> {
  const now = new Date();
  const lockedBy = `${orderId}:1`;
  const outcome = await stack.deps.states.apply(orderId, (r) =>
    andThen(
      stepSucceeded(r, { now, lockedBy, stepIndex: stepIndex - 1, result: {}, compensation: null }),
      (done) => stepDispatched(done, { now, lockedBy, stepIndex, stepTimeoutSeconds: 10 }),
    ),
  );
  if (outcome.kind !== "written") throw new Error(`${orderId}: ${outcome.kind}`);
  const order = (await stack.deps.orders.get(orderId))!;
  return dispatchedRequest(outcome.record, orderWorkflowV1.steps[stepIndex]!, order, {
    instanceId: lockedBy,
    stepIndex,
    kind: "do",
  });
}

async function ledger(): Promise<Array<{ idempotencyKey: string; applied: boolean; requests: number }>> {
  const res = await fetch(`${stack.emulators.simulatorUrl}/_ledger`);
  return (
    (await res.json()) as { entries: Array<{ idempotencyKey: string; applied: boolean; requests: number }> }
  ).entries;
}

describe("agent", () => {
  it("calls the service with the idempotency key and replies ok with the request's MessageId", async () => {
    const req = await request();
    expect(req.payload).toEqual({
      operation: "charge",
      body: { orderId: req.orderId, amount: 12.5, currency: "EUR" },
    });
    let outcome: Awaited<ReturnType<typeof handleAgentRequest>> | undefined;
    // The dispatch was written by this instance: the record and the order document are known, no store request.
    expect(
      await recordAndOrderRequests(async () => {
        outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", req);
      }),
    ).toEqual([]);
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
      await request(1_000_000),
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
    const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", await request());
    expect(outcome).toMatchObject({ kind: "replied", calls: 3, reply: { outcome: "transient" } });
    await fetch(`${stack.emulators.simulatorUrl}/_faults`, { method: "DELETE" });
    await drain(stack.bus, "agent-replies");
  });

  it("drops a request whose deadline has passed, without calling the service or replying", async () => {
    const outcome = await handleAgentRequest(
      stack.deps,
      stack.context(),
      "payment",
      // Dispatched a minute ago with a 30 s deadline.
      await request(12.5, { now: new Date(Date.now() - 60_000), stepTimeoutSeconds: 30 }),
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

  it("refuses a request for an order that does not exist: no call, no reply, one alert", async () => {
    const orderId = `AG-GHOST-${++n}`;
    const instanceId = `${orderId}:1`;
    const forged: AgentRequest = {
      requestId: agentRequestId(instanceId, 1, "do"),
      orderId,
      instanceId,
      stepIndex: 1,
      step: "chargePayment",
      kind: "do",
      payload: { operation: "charge", body: { orderId, amount: 4321.5, currency: "EUR" } },
      completeBy: new Date(Date.now() + 10_000).toISOString(),
      idempotencyKey: idempotencyKeyFor(orderId, "chargePayment", "do"),
    };
    const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", forged);
    expect(outcome).toEqual({
      kind: "refused",
      reason: `step 1 do of ${instanceId}: order ${orderId} does not exist`,
    });
    expect(await ledger()).toEqual([]);
    expect(await drain(stack.bus, "agent-replies")).toEqual([]);
    expect(await drain(stack.bus, "alerts")).toEqual([
      expect.objectContaining({
        kind: "InvalidMessage",
        orderId,
        reason: `payment-requests: step 1 do of ${instanceId}: order ${orderId} does not exist`,
      }),
    ]);
  });

  it("refuses a request whose operation or body is not what the record dispatched", async () => {
    const req = await request();
    const body = req.payload.body as Record<string, unknown>;
    const tampered: Array<[AgentRequest, string]> = [
      [{ ...req, payload: { ...req.payload, body: { ...body, amount: 4321.5 } } }, "payload.body differs"],
      [
        { ...req, payload: { operation: "refund", body } },
        'payload.operation: expected "charge", got "refund"',
      ],
    ];
    for (const [forged, reason] of tampered) {
      const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", forged);
      expect(outcome).toEqual({ kind: "refused", reason: expect.stringContaining(reason) });
    }
    expect(await ledger()).toEqual([]);
    expect(await drain(stack.bus, "agent-replies")).toEqual([]);
    expect(await drain(stack.bus, "alerts")).toHaveLength(2);
    // The request as dispatched still goes through.
    expect(await handleAgentRequest(stack.deps, stack.context(), "payment", req)).toMatchObject({
      kind: "replied",
      reply: { outcome: "ok" },
    });
    await drain(stack.bus, "agent-replies");
  });

  it("drops a request redelivered after its step was answered: no call, no alert", async () => {
    const req = await request();
    expect(await handleAgentRequest(stack.deps, stack.context(), "payment", req)).toMatchObject({
      kind: "replied",
    });
    const written = await stack.deps.states.apply(req.orderId, (r) =>
      stepSucceeded(r, {
        now: new Date(),
        lockedBy: req.instanceId,
        stepIndex: 1,
        result: {},
        compensation: null,
      }),
    );
    expect(written.kind).toBe("written");
    expect(await handleAgentRequest(stack.deps, stack.context(), "payment", req)).toEqual({
      kind: "dropped",
      reason: "the record has moved past the request",
      calls: 0,
      injected: 0,
    });
    expect(await ledger()).toEqual([
      expect.objectContaining({ idempotencyKey: req.idempotencyKey, requests: 1 }),
    ]);
    expect(await drain(stack.bus, "alerts")).toEqual([]);
    await drain(stack.bus, "agent-replies");
  });

  it("asks the store when its own copy of the record is behind the dispatch", async () => {
    // Another instance: it read the record while step 0 was in progress; the dispatch of step 1 happened elsewhere.
    const other = stack.dependencies({});
    const order = sampleOrder({
      orderId: `AG-${++n}`,
      items: [{ sku: "SKU-1", quantity: 1, unitPrice: 12.5 }],
    });
    await dispatchedStep(stack.deps, order, 0);
    expect((await other.states.get(order.orderId))?.steps[1]?.status).toBe("Pending");
    const req = await continueTo(order.orderId, 1);
    let outcome: Awaited<ReturnType<typeof handleAgentRequest>> | undefined;
    // One point read of the record (its copy said no), one of the order document (not cached there yet).
    expect(
      await recordAndOrderRequests(async () => {
        outcome = await handleAgentRequest(other, stack.context(), "payment", req);
      }),
    ).toEqual(["GET state", "GET orders"]);
    expect(outcome).toMatchObject({ kind: "replied", reply: { outcome: "ok" } });
    await drain(stack.bus, "agent-replies");
  });

  it("alerts on a malformed request and names the bad field", async () => {
    const outcome = await handleAgentRequest(stack.deps, stack.context(), "payment", {
      ...(await request()),
      stepIndex: "one",
    });
    expect(outcome).toMatchObject({ kind: "invalid", reason: expect.stringContaining("stepIndex") });
    const alerts = await drain(stack.bus, "alerts");
    expect(alerts).toEqual([
      expect.objectContaining({ kind: "InvalidMessage", reason: expect.stringContaining("stepIndex") }),
    ]);
  });
});

describe("agent, when the service answers what is not its answer", () => {
  const arm = (spec: Record<string, unknown>) =>
    fetch(`${stack.emulators.simulatorUrl}/_faults`, {
      method: "POST",
      body: JSON.stringify({ service: "payment", operation: "charge", kind: "answer", ...spec }),
    });
  const disarm = () => fetch(`${stack.emulators.simulatorUrl}/_faults`, { method: "DELETE" });

  it("replies transient to an HTML 200, never ok, with one InvalidAnswer alert per step however often it meets it", async () => {
    await arm({
      status: 200,
      contentType: "text/html",
      body: "<html><p>Thank you for your payment</p></html>",
    });
    try {
      const req = await request();
      for (let delivery = 0; delivery < 2; delivery++) {
        expect(await handleAgentRequest(stack.deps, stack.context(), "payment", req)).toMatchObject({
          kind: "replied",
          calls: 3,
          reply: { outcome: "transient", error: { code: "InvalidAnswer" } },
        });
      }
      expect(await ledger()).toEqual([]);
      const alerts = (await drain(stack.bus, "alerts")) as Array<Record<string, unknown>>;
      expect(alerts).toEqual([
        expect.objectContaining({
          kind: "InvalidAnswer",
          service: "payment",
          orderId: req.orderId,
          reason: expect.stringMatching(
            /^payment charge \(step chargePayment do\) .*HTTP 200 .*text\/html.*not a JSON object/,
          ),
        }),
      ]);
    } finally {
      await disarm();
      await drain(stack.bus, "agent-replies");
    }
  });

  it("replies transient to a 404 (no such route), not permanent, with a ServiceMisconfigured alert naming the URL", async () => {
    await arm({
      status: 404,
      contentType: "application/json",
      body: '{"code":"NotFound","message":"No route"}',
    });
    try {
      const req = await request();
      expect(await handleAgentRequest(stack.deps, stack.context(), "payment", req)).toMatchObject({
        kind: "replied",
        reply: { outcome: "transient", error: { code: "RouteNotFound" } },
      });
      const alerts = (await drain(stack.bus, "alerts")) as Array<Record<string, unknown>>;
      expect(alerts).toEqual([
        expect.objectContaining({
          kind: "ServiceMisconfigured",
          service: "payment",
          orderId: null,
          reason: expect.stringContaining(
            `payment charge is not where PAYMENT_URL says: POST ${stack.emulators.simulatorUrl}/payment/charge answered HTTP 404`,
          ),
        }),
      ]);
    } finally {
      await disarm();
      await drain(stack.bus, "agent-replies");
    }
  });
});
