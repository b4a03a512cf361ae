import { describe, expect, it } from "vitest";
import {
  agentReplySchema,
  agentRequestId,
  agentRequestSchema,
  alertSchema,
  idempotencyKeyFor,
  isAllowedReplyTo,
  replyEventName,
  statusMessageSchema,
  validate,
} from "../../../src/domain";

const request = {
  requestId: agentRequestId("ORD-1:2", 1, "do"),
  orderId: "ORD-1",
  instanceId: "ORD-1:2",
  stepIndex: 1,
  step: "chargePayment",
  kind: "do",
  payload: { amount: 19.98, currency: "EUR" },
  completeBy: "2026-11-29T10:00:30.000Z",
  idempotencyKey: idempotencyKeyFor("ORD-1", "chargePayment", "do"),
};

describe("agent messages", () => {
  it("keys requests per attempt and idempotency per order step, stable across attempts", () => {
    expect(request.requestId).toBe("ORD-1:2:1:do");
    expect(request.idempotencyKey).toBe("ORD-1:chargePayment:do");
    expect(replyEventName(1, "undo")).toBe("reply:1:undo");
    expect(validate(agentRequestSchema, request).ok).toBe(true);
  });

  it("names what is wrong with a request", () => {
    const result = validate(agentRequestSchema, { ...request, kind: "redo", completeBy: "tomorrow" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => i.path).sort()).toEqual(["completeBy", "kind"]);
  });

  it("requires an error on a failed reply", () => {
    const reply = {
      requestId: request.requestId,
      orderId: "ORD-1",
      instanceId: "ORD-1:2",
      stepIndex: 1,
      kind: "do",
    };
    expect(validate(agentReplySchema, { ...reply, outcome: "ok", result: { chargeId: "c1" } }).ok).toBe(true);
    const failed = validate(agentReplySchema, { ...reply, outcome: "permanent" });
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect(failed.issues[0]?.path).toBe("error");
    expect(
      validate(agentReplySchema, {
        ...reply,
        outcome: "permanent",
        error: { code: "Declined", message: "limit" },
      }).ok,
    ).toBe(true);
  });

  it("validates alerts and status messages", () => {
    const at = "2026-11-29T10:00:00.000Z";
    expect(
      validate(alertSchema, { kind: "Error", orderId: "ORD-1", processState: "Error", reason: "x", at }).ok,
    ).toBe(true);
    expect(
      validate(alertSchema, { kind: "Oops", orderId: null, processState: null, reason: "x", at }).ok,
    ).toBe(false);
    expect(
      validate(statusMessageSchema, {
        orderId: "ORD-1",
        status: "received",
        processState: "Pending",
        at,
        detail: null,
      }).ok,
    ).toBe(true);
  });

  it("allows replyTo only under the status queue prefix", () => {
    expect(isAllowedReplyTo("status-demo", "status-")).toBe(true);
    expect(isAllowedReplyTo("status-", "status-")).toBe(false);
    expect(isAllowedReplyTo("orders", "status-")).toBe(false);
  });
});
