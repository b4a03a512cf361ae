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
  validateBody,
} from "../../../src/domain";
import { RAW_CONTROL } from "../../support/text";

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

  it("refuses a reply whose ids do not fit together, naming the field", () => {
    const reply = {
      requestId: "ORD-1:2:1:do",
      orderId: "ORD-1",
      instanceId: "ORD-1:2",
      stepIndex: 1,
      kind: "do",
    };
    const problems = (overrides: Record<string, unknown>): string => {
      const result = validate(agentReplySchema, { ...reply, outcome: "ok", ...overrides });
      return result.ok ? "accepted" : result.message;
    };
    expect(problems({})).toBe("accepted");
    // The id the durable client would put in its URL as it is.
    expect(problems({ instanceId: "ORD-1:2/terminate?reason=x" })).toContain(
      'instanceId: expected an attempt id <orderId>:<attempt>, got "ORD-1:2/terminate?reason=x"',
    );
    expect(problems({ orderId: "ORD-9" })).toContain(
      '(root): instanceId: "ORD-1:2" is an attempt of order "ORD-1", not of "ORD-9"',
    );
    expect(problems({ requestId: "ORD-1:2:0:do" })).toContain(
      'requestId: expected "ORD-1:2:1:do" for step 1 do of ORD-1:2, got "ORD-1:2:0:do"',
    );
    expect(problems({ kind: "undo" })).toContain('requestId: expected "ORD-1:2:1:undo"');
    expect(problems({ orderId: "ORD/1" })).toContain("orderId: expected 1-64 letters");
    expect(problems({ instanceId: "ORD-1:0", requestId: "ORD-1:0:1:do" })).toContain("instanceId:");
    expect(problems({ result: { blob: "x".repeat(20_000) } })).toContain(
      "result: expected at most 16384 bytes",
    );
  });

  it("refuses a reply with a hostile key or code on one line, escaped, as the reply router alerts it", () => {
    const reply = {
      requestId: "ORD-1:2:1:do",
      orderId: "ORD-1",
      instanceId: "ORD-1:2",
      stepIndex: 1,
      kind: "do",
      outcome: "transient",
      error: { code: "Busy", message: "x" },
    };
    for (const [escaped, raw] of [
      ["\\n", "\n"],
      ["\\r", "\r"],
      ["\\u2028", "\u2028"],
      ["\\u0085", "\u0085"],
    ]) {
      const forged = `a${raw}ALERT Error order=ORD-1`;
      const result = validateBody(agentReplySchema, {
        ...reply,
        [forged]: 1,
        result: { [forged]: 1 },
        error: { code: "Busy", message: "x", [forged]: 1 },
        instanceId: `ORD-1:2${raw}`,
      });
      expect(result.ok, escaped).toBe(false);
      if (result.ok) continue;
      expect(result.message, escaped).not.toMatch(RAW_CONTROL);
      expect(result.message, escaped).toContain(`a${escaped}ALERT Error order=ORD-1`);
      expect(result.message, escaped).toContain(`got "ORD-1:2${escaped}"`);
    }
  });

  it("refuses a request whose idempotency key is not its order's step key", () => {
    const result = validate(agentRequestSchema, { ...request, idempotencyKey: "ORD-2:chargePayment:do" });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.message).toBe(
        'idempotencyKey: expected "ORD-1:chargePayment:do", got "ORD-2:chargePayment:do"',
      );
    const header = validate(agentRequestSchema, { ...request, step: "charge\r\nX-Evil: 1" });
    expect(header.ok).toBe(false);
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
