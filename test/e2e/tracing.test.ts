/**
 * Tracing: one order is one connected trace, from the front door (which records the submission) through the
 * attempt's start, each agent request, the remote call (whose traceparent the remote service
 * received) and the reply; read through GET /api/orders/{orderId}/trace, from the app's span buffer
 * (LOCAL_TRACING=memory, as the shipped settings run the devhost). A trace context that is malformed, or forged,
 * in a request header or in a message's application properties, changes which trace an order joins, never
 * whether it is processed.
 */
import { expect } from "vitest";
import type { TraceSpan } from "../../src/api/trace";
import { AGENT_NAMES, orderWorkflowV1, parseTraceparent } from "../../src/domain";
import { type E2E } from "../support/e2e";
import { e2eOrder, submitRecoveredOrder } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";

const it = e2eTest({ LOCAL_TRACING: "memory" });

interface OrderTrace {
  orderId: string;
  traceId: string;
  spans: TraceSpan[];
}

const names = (trace: OrderTrace) => trace.spans.map((s) => s.name);
const count = (trace: OrderTrace, name: string) => names(trace).filter((n) => n === name).length;

/** The declared process's steps (src/domain/process.ts). */
const STEPS = orderWorkflowV1.steps;

/**
 * The spans a processed order's trace holds once its last reply has been processed (each recorded where it is
 * processed): one reply per step, one attempt.
 */
function complete(trace: OrderTrace | undefined): trace is OrderTrace {
  if (!trace) return false;
  return count(trace, "process agent-replies") === STEPS.length && count(trace, "start attempt") === 1;
}

async function orderTrace(e2e: E2E, orderId: string): Promise<OrderTrace | undefined> {
  const res = await e2e.api(`/api/orders/${encodeURIComponent(orderId)}/trace`);
  return res.status === 200 ? ((await res.json()) as OrderTrace) : undefined;
}

/** Polls the trace until every span of the processed order has ended and is in the buffer. */
async function completeTrace(e2e: E2E, orderId: string): Promise<OrderTrace> {
  await e2e.waitForState(orderId, ["Processed"]);
  let last: OrderTrace | undefined;
  await expect
    .poll(async () => complete((last = await orderTrace(e2e, orderId))), {
      timeout: 10_000,
      interval: 100,
      message: `the trace of ${orderId} is complete`,
    })
    .toBe(true);
  return last!;
}

/** One root, every other span's parent in the trace: nothing hangs off a span the trace does not have. */
function expectConnected(trace: OrderTrace): TraceSpan {
  const roots = trace.spans.filter((s) => s.parentSpanId === null);
  expect(roots.map((s) => s.name)).toHaveLength(1);
  const ids = new Set(trace.spans.map((s) => s.spanId));
  expect(trace.spans.filter((s) => s.parentSpanId !== null && !ids.has(s.parentSpanId))).toEqual([]);
  expect(new Set(trace.spans.map((s) => s.spanId)).size).toBe(trace.spans.length);
  return roots[0]!;
}

const parentOf = (trace: OrderTrace, span: TraceSpan) =>
  trace.spans.find((s) => s.spanId === span.parentSpanId);

it("one order yields one connected trace, across every hop of its path", async ({ e2e }) => {
  const order = e2eOrder("TRACE");
  expect((await e2e.submit(order)).status).toBe(202);
  const trace = await completeTrace(e2e, order.orderId);

  const root = expectConnected(trace);
  expect(root).toMatchObject({ name: "POST /api/orders", kind: "server", service: "httpApi-submitOrder" });
  expect(root.attributes).toMatchObject({ "sas.trace_context": "absent", "http.response.status_code": 202 });
  expect(count(trace, "start attempt")).toBe(1);
  // The front door recorded the submission itself: the order never went through the orders queue.
  expect(count(trace, "send orders") + count(trace, "process orders")).toBe(0);
  // The first step's request goes out with the claim, from the starter: no activity dispatches it.
  expect(count(trace, "activity schedulerDispatchNext")).toBe(0);
  // One request per step to the step's agent, one call to its service, one reply, in the order of the steps.
  for (const agent of AGENT_NAMES) {
    const steps = STEPS.filter((s) => s.agent === agent).length;
    expect(count(trace, `send ${agent}-requests`), agent).toBe(steps);
    expect(count(trace, `process ${agent}-requests`), agent).toBe(steps);
  }
  expect(trace.spans.filter((s) => s.kind === "client").map((s) => `${s.service} ${s.name}`)).toEqual(
    STEPS.map((s) => `${s.agent} POST ${s.doOperation}`),
  );
  expect(count(trace, "send agent-replies")).toBe(STEPS.length);

  // The path, hop by hop: each span under the one that caused it.
  const span = (name: string) => trace.spans.find((s) => s.name === name)!;
  expect(parentOf(trace, span("start attempt"))).toBe(root);
  expect(parentOf(trace, span(`send ${STEPS[0]!.agent}-requests`))?.name).toBe("start attempt");
  // Each answer is recorded where its reply is processed, and the next step's request goes out from there: no
  // activity runs for an order that goes straight through.
  expect(names(trace).filter((n) => n.startsWith("activity "))).toEqual([]);
  for (const step of STEPS.slice(1)) {
    const sends = trace.spans.filter((s) => s.name === `send ${step.agent}-requests`);
    expect(sends.map((s) => parentOf(trace, s)?.name)).toContain("process agent-replies");
  }
  const payment = span("process payment-requests");
  expect(parentOf(trace, payment)?.name).toBe("send payment-requests");
  expect(payment).toMatchObject({ service: "paymentAgent", kind: "consumer" });
  expect(payment.attributes).toMatchObject({
    "sas.outcome": "ok",
    "sas.calls": 1,
    "sas.trace_context": "continued",
  });
  expect(parentOf(trace, span("POST charge"))).toBe(payment);
  const reply = trace.spans.find(
    (s) => s.name === "process agent-replies" && parentOf(trace, parentOf(trace, s)!) === payment,
  );
  expect(reply, "the payment agent's reply, processed under the agent's span").toBeDefined();
  // Every span that knows its order names this one.
  expect(
    trace.spans.filter(
      (s) => "sas.order_id" in s.attributes && s.attributes["sas.order_id"] !== order.orderId,
    ),
  ).toEqual([]);
  expect(trace.spans.every((s) => s.durationMs >= 0 && s.startOffsetMs >= 0)).toBe(true);
  expect(trace.spans.every((s) => s.status !== "error")).toBe(true);

  // The remote services received the context of the client span of each call.
  const ledger = await e2e.ledger(order.orderId);
  expect(ledger).toHaveLength(STEPS.length);
  for (const entry of ledger) {
    const sent = parseTraceparent(entry.traceparent);
    const call = trace.spans.find((s) => s.spanId === sent?.spanId);
    expect(sent?.traceId, entry.operation).toBe(trace.traceId);
    expect(call?.name, entry.operation).toBe(`POST ${entry.operation}`);
  }
});

it("keeps a recovered order in one trace: the failed calls, the Supervisor's decision and the second attempt", async ({
  e2e,
}) => {
  // Attempt 1's charge always fails, its deadline notice reaches the Supervisor, and attempt 2 finishes.
  const order = await submitRecoveredOrder(e2e, "TRACE-RECOVERED");
  // Complete once attempt 2's hops have ended: the charge's request, sent with the claim, then the two replies,
  // each recorded where it was processed.
  const attemptChildren = (trace: OrderTrace, instanceId: string) => {
    const start = trace.spans.find(
      (s) => s.name === "start attempt" && s.attributes["sas.instance_id"] === instanceId,
    );
    return trace.spans.filter((s) => s.parentSpanId === start?.spanId).map((s) => s.name);
  };
  const repliesOf = (trace: OrderTrace, instanceId: string) =>
    trace.spans.filter(
      (s) => s.name === "process agent-replies" && s.attributes["sas.instance_id"] === instanceId,
    );
  let trace: OrderTrace | undefined;
  await expect
    .poll(
      async () => {
        trace = await orderTrace(e2e, order.orderId);
        return trace
          ? [attemptChildren(trace, `${order.orderId}:2`), repliesOf(trace, `${order.orderId}:2`).length]
          : [];
      },
      { timeout: 10_000, interval: 100 },
    )
    .toEqual([["send payment-requests"], 2]);
  const recovered = trace!;
  expectConnected(recovered);
  const attempts = recovered.spans.filter((s) => s.name === "start attempt");
  expect(attempts.map((s) => s.attributes["sas.instance_id"])).toEqual([
    `${order.orderId}:1`,
    `${order.orderId}:2`,
  ]);
  // Each names the function that claimed it (the submission's fast path, the starter's timer, a hand-over).
  for (const attempt of attempts) expect(attempt.attributes["sas.function"]).toEqual(expect.any(String));
  expect(attempts[1]!.service).toBe(attempts[1]!.attributes["sas.function"]);
  // Both attempts hang off the submission (the front door's): the record carries the order's trace from one to the
  // next.
  expect(new Set(attempts.map((s) => parentOf(recovered, s)?.name))).toEqual(new Set(["POST /api/orders"]));
  // The failed charges (three, unless attempt 1's deadline came first), then the one that went through.
  const charges = recovered.spans
    .filter((s) => s.name === "POST charge")
    .map((s) => [s.status, s.attributes["http.response.status_code"]]);
  expect(charges.length).toBeGreaterThanOrEqual(3);
  expect(charges.at(-1)).toEqual(["unset", 200]);
  expect(new Set(charges.slice(0, -1).map(String))).toEqual(new Set(["error,503"]));
  // Attempt 1's notice reached the Supervisor in the same trace. It decides, unless its sweep (every second here)
  // found the expired record first: then the sweep's decision is the order's span, and the notice moved on.
  const notice = recovered.spans.find((s) => s.name === "process deadlines");
  expect(notice?.attributes).toMatchObject({ "sas.trace_context": "continued" });
  // It was sent where attempt 1 ended: where its transient failure was recorded, or by its deadline activity.
  const noticeSentFrom = parentOf(recovered, parentOf(recovered, notice!)!)!;
  const endedAttempt1 = [
    ...repliesOf(recovered, `${order.orderId}:1`),
    ...recovered.spans.filter(
      (s) =>
        s.name === "activity schedulerReportDeadline" &&
        attemptChildren(recovered, `${order.orderId}:1`).includes(s.name),
    ),
  ];
  expect(endedAttempt1).toContain(noticeSentFrom);
  const decisions = recovered.spans
    .filter((s) => s === notice || s.name === "supervisor expire")
    .map((s) => s.attributes["sas.decision"])
    .filter((d) => d !== undefined && d !== "none");
  expect(decisions, "one decision, by the notice or the sweep").toEqual(["Pending"]);
});

it("continues a caller's valid traceparent, and starts a new trace for a malformed one", async ({ e2e }) => {
  const forged = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const continued = e2eOrder("TRACE-CALLER");
  const malformed = e2eOrder("TRACE-BADHEADER");
  for (const [order, traceparent] of [
    [continued, forged],
    [malformed, "00-not-a-trace-context-01"],
  ] as const) {
    const res = await e2e.api("/api/orders", {
      method: "POST",
      headers: { "content-type": "application/json", traceparent, tracestate: "vendor=x,,=broken" },
      body: JSON.stringify(order),
    });
    expect(res.status).toBe(202);
  }
  const caller = await completeTrace(e2e, continued.orderId);
  expect(caller.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
  // The caller's span is not in this process: the front door is the root the trace holds.
  expect(expectConnected(caller).attributes).toMatchObject({ "sas.trace_context": "continued" });

  const fresh = await completeTrace(e2e, malformed.orderId);
  expect(expectConnected(fresh)).toMatchObject({ name: "POST /api/orders" });
  expect(fresh.spans[0]!.attributes["sas.trace_context"]).toBe("refused");
  expect(fresh.traceId).not.toBe(caller.traceId);
});

it("processes a message whose application properties carry a malformed trace context, in a new trace", async ({
  e2e,
}) => {
  const order = e2eOrder("TRACE-BADPROPS");
  const sender = e2e.bus.createSender("orders");
  try {
    await sender.sendMessages({
      body: order,
      messageId: `${order.orderId}:bad-trace`,
      contentType: "application/json",
      applicationProperties: {
        traceparent: "ff-ffffffffffffffffffffffffffffffff-ffffffffffffffff-ff",
        tracestate: "x".repeat(600),
        "Diagnostic-Id": "|not-w3c.1.",
      },
    });
  } finally {
    await sender.close();
  }
  const trace = await completeTrace(e2e, order.orderId);
  const root = expectConnected(trace);
  expect(root).toMatchObject({ name: "process orders", kind: "consumer", service: "submitOrder" });
  expect(root.attributes).toMatchObject({ "sas.trace_context": "refused", "sas.order_id": order.orderId });
  expect(await e2e.drain("alerts")).toEqual([]);
});

it("answers 404 for an unknown order and 400 for a bad orderId", async ({ e2e }) => {
  expect((await e2e.api("/api/orders/NO-SUCH-ORDER/trace")).status).toBe(404);
  expect((await e2e.api("/api/orders/-bad-/trace")).status).toBe(400);
});
