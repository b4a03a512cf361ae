import { describe, expect, it } from "vitest";
import {
  AGENT_NAMES,
  checkRequest,
  dispatchedRequest,
  expire,
  orderWorkflowV1,
  processed,
  requestMismatch,
  stepDispatched,
  stepSucceeded,
  type AgentName,
  type AgentRequest,
  type StateRecord,
  type StepKind,
  type WorkflowDefinition,
} from "../../../src/domain";
import { at, ok, processingRecord, sampleOrder } from "../../support/domain";
import { FIXTURE_3, fixtureDoRequest } from "../../support/fixtureWorkflows";

const order = sampleOrder();
/** The records below are on the builders' default workflow, a three-step fixture, not the sample process. */
const workflow = FIXTURE_3;
const step = (index: number) => workflow.steps[index]!;

/** The request the Scheduler sends for `record`'s dispatch of a step, as the dispatcher builds it. */
function sent(
  record: StateRecord,
  stepIndex: number,
  kind: StepKind = "do",
  instanceId = "ORD-1001:1",
  on: WorkflowDefinition = workflow,
) {
  return dispatchedRequest(record, on.steps[stepIndex]!, order, { instanceId, stepIndex, kind });
}

const check = (record: StateRecord | undefined, request: AgentRequest, agent: AgentName = step(1).agent) =>
  checkRequest(record, workflow, agent, request);

describe("checkRequest", () => {
  // Attempt 1 holds the record; step 0 succeeded, step 1 is dispatched and awaits its answer.
  const charging = processingRecord(1, true);

  it("lets the agent act on the dispatch in progress, until the record's deadline", () => {
    expect(charging.workflow).toEqual({ name: workflow.name, version: workflow.version });
    const request = sent(charging, 1);
    expect(request).toMatchObject({
      requestId: "ORD-1001:1:1:do",
      payload: { operation: step(1).doOperation, body: fixtureDoRequest(order, step(1).name) },
      idempotencyKey: `ORD-1001:${step(1).name}:do`,
    });
    expect(check(charging, request)).toMatchObject({
      verdict: "current",
      definition: { name: step(1).name },
      deadline: charging.completeBy,
    });
  });

  it("on the sample process, checks the payment step's request with the body orderWorkflowV1 builds", () => {
    const index = orderWorkflowV1.steps.findIndex((s) => s.name === "chargePayment");
    const record = processingRecord(index, true, orderWorkflowV1);
    const request = sent(record, index, "do", "ORD-1001:1", orderWorkflowV1);
    expect(request).toMatchObject({
      requestId: `ORD-1001:1:${index}:do`,
      payload: { operation: "charge", body: { orderId: "ORD-1001", amount: 19.98, currency: "EUR" } },
      idempotencyKey: "ORD-1001:chargePayment:do",
    });
    expect(checkRequest(record, orderWorkflowV1, orderWorkflowV1.steps[index]!.agent, request)).toMatchObject(
      {
        verdict: "current",
        definition: { name: "chargePayment" },
        deadline: record.completeBy,
      },
    );
  });

  it("refuses a request the Scheduler never dispatched", () => {
    const request = sent(charging, 1);
    // The same order, finished: every step done, the lock released.
    const lockedBy = "ORD-1001:1";
    const charged = ok(
      stepSucceeded(charging, {
        now: at(11),
        lockedBy,
        stepIndex: 1,
        result: { chargeId: "CH-1" },
        compensation: { chargeId: "CH-1" },
      }),
    );
    const booking = ok(
      stepDispatched(charged, { now: at(12), lockedBy, stepIndex: 2, stepTimeoutSeconds: 30 }),
    );
    const booked = ok(
      stepSucceeded(booking, { now: at(13), lockedBy, stepIndex: 2, result: {}, compensation: null }),
    );
    const done = ok(processed(booked, { now: at(14), lockedBy }));
    expect(done.processState).toBe("Processed");
    const refund = { ...request, requestId: "ORD-1001:1:1:undo", kind: "undo" as const };
    const agent1 = step(1).agent;
    // A declared service other than step 1's (the fixture takes the declared services in turn).
    const otherAgent = AGENT_NAMES.find((a) => a !== agent1) ?? agent1;
    const cases: Array<[StateRecord | undefined, AgentRequest, string, AgentName]> = [
      [undefined, request, "order ORD-1001 does not exist", agent1],
      [done, refund, `no such request was dispatched (${step(1).name} undo last dispatched as none)`, agent1],
      [
        charging,
        { ...request, instanceId: "ORD-1001:2", requestId: "ORD-1001:2:1:do" },
        "attempt 2 was never started",
        agent1,
      ],
      [
        charging,
        { ...sent(charging, 1), stepIndex: 2, requestId: "ORD-1001:1:2:do" },
        `${step(2).name} do last dispatched as none`,
        step(2).agent,
      ],
      [charging, request, `the step is ${agent1}'s, not ${otherAgent}'s`, otherAgent],
      [charging, { ...request, step: "refundEverything" }, `step: expected "${step(1).name}"`, agent1],
    ];
    // With a single declared service there is no other agent to refuse: this test needs two.
    expect(otherAgent).not.toBe(agent1);
    for (const [record, forged, reason, agent] of cases) {
      expect(checkRequest(record, workflow, agent, forged), reason).toEqual({
        verdict: "unknown",
        reason: expect.stringContaining(reason),
      });
    }
  });

  it("drops, without an alarm, a request that was dispatched but that the record has moved past", () => {
    // Step 0 was dispatched by this attempt and answered: a redelivery of its request.
    const answered = sent(charging, 0);
    expect(check(charging, answered, step(0).agent)).toMatchObject({
      verdict: "stale",
      reason: expect.stringContaining("no longer in progress"),
    });
    // The Supervisor expired the attempt: its request is no longer wanted, whatever it says.
    const expired = ok(
      expire(charging, { now: at(100), expectedLockedBy: "ORD-1001:1", maxFailures: 3, backoffSeconds: 1 }),
    );
    expect(check(expired, sent(charging, 1))).toMatchObject({
      verdict: "stale",
      reason: expect.stringContaining("held by nobody"),
    });
  });
});

describe("requestMismatch", () => {
  const charging = processingRecord(1, true);
  const request = sent(charging, 1);

  it("finds no difference in the request the dispatcher built, whatever the order of its keys", () => {
    const body = request.payload.body as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(requestMismatch({ ...request, payload: { ...request.payload, body: reordered } }, request)).toBe(
      undefined,
    );
  });

  it("names the field a tampered request changed, without echoing a body", () => {
    const body = { ...(request.payload.body as Record<string, unknown>), amount: 4321.5 };
    const undo = step(1).undoOperation;
    expect(requestMismatch({ ...request, payload: { operation: undo, body } }, request)).toContain(
      `payload.operation: expected "${step(1).doOperation}", got "${undo}"`,
    );
    const changed = requestMismatch({ ...request, payload: { ...request.payload, body } }, request);
    expect(changed).toBe(
      "step 1 do of ORD-1001:1: payload.body differs from the body the Scheduler dispatched",
    );
    expect(requestMismatch({ ...request, completeBy: at(9_999).toISOString() }, request)).toContain(
      "completeBy: expected",
    );
  });
});
