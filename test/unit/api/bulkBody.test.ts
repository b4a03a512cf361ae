/**
 * The body of POST /api/bulk/retry and /cancel: what it takes, its defaults, and a refusal naming the field for
 * each way to get it wrong.
 */
import { describe, expect, it } from "vitest";
import { BULK_LIMIT, BULK_STATES, bulkActionBody, bulkDetail } from "../../../src/api/bulk";
import { validateBody } from "../../../src/domain";

const parse = (action: "retry" | "cancel", body: unknown) => validateBody(bulkActionBody(action), body);
const refusal = (action: "retry" | "cancel", body: unknown): string => {
  const result = parse(action, body);
  if (result.ok) throw new Error(`expected a refusal of ${JSON.stringify(body)}`);
  return result.message;
};

describe("bulk action body", () => {
  it("needs only a state; dryRun, limit and the rest have defaults or are absent", () => {
    expect(parse("retry", { filter: { state: "Error" } })).toEqual({
      ok: true,
      value: { filter: { state: "Error" }, dryRun: false, limit: BULK_LIMIT.default },
    });
  });

  it("takes every field, spelling the times as the store writes them", () => {
    // Kept as given: the handler reads it with the paging keys (test/unit/api/continuation.test.ts).
    const continuation = "eyJ1cGRhdGVkQXQiOiIyMDI1In0.signature";
    const result = parse("cancel", {
      filter: {
        state: "Pending",
        errorCode: "CircuitOpen",
        updatedSince: "2025-03-01T09:00:00Z",
        updatedBefore: "2025-03-01T11:00:00.5Z",
      },
      dryRun: true,
      reason: "payment outage of 1 March",
      limit: 1000,
      continuation,
    });
    expect(result).toEqual({
      ok: true,
      value: {
        filter: {
          state: "Pending",
          errorCode: "CircuitOpen",
          updatedSince: "2025-03-01T09:00:00.000Z",
          updatedBefore: "2025-03-01T11:00:00.500Z",
        },
        dryRun: true,
        reason: "payment outage of 1 March",
        limit: 1000,
        continuation,
      },
    });
  });

  it("allows each action the states its single-order transition starts from, and no other", () => {
    for (const action of ["retry", "cancel"] as const) {
      for (const state of BULK_STATES[action]) expect(parse(action, { filter: { state } }).ok).toBe(true);
    }
    expect(refusal("retry", { filter: { state: "Processing" } })).toBe(
      'filter.state: expected one of Error, CompensationFailed for a bulk retry, got "Processing"',
    );
    expect(refusal("cancel", { filter: { state: "CompensationFailed" } })).toBe(
      'filter.state: expected one of Pending, Processing, Error for a bulk cancel, got "CompensationFailed"',
    );
    expect(refusal("retry", { filter: {} })).toBe(
      "filter.state: required: expected one of Error, CompensationFailed for a bulk retry",
    );
  });

  it.each([
    [{}, "filter: required: expected an object"],
    [{ filter: "Error" }, 'filter: expected an object, got "Error"'],
    [{ filter: { state: "Error", errorCode: "no spaces" } }, "filter.errorCode: expected a letter"],
    [{ filter: { state: "Error", errorCode: "9Lives" } }, "filter.errorCode: expected a letter"],
    [{ filter: { state: "Error", errorCode: "A".repeat(65) } }, "filter.errorCode: expected a letter"],
    [{ filter: { state: "Error", errorCode: 7 } }, "filter.errorCode: expected a string"],
    [{ filter: { state: "Error", updatedSince: "yesterday" } }, "filter.updatedSince: expected an ISO-8601"],
    [
      {
        filter: {
          state: "Error",
          updatedSince: "2025-03-02T00:00:00Z",
          updatedBefore: "2025-03-01T00:00:00Z",
        },
      },
      "filter.updatedBefore: expected a time after updatedSince",
    ],
    [{ filter: { state: "Error", processState: "Error" } }, 'filter: Unrecognized key: "processState"'],
    [{ filter: { state: "Error" }, dryRun: "yes" }, "dryRun: expected true or false"],
    [{ filter: { state: "Error" }, limit: 0 }, "limit: expected a whole number from 1 to 1000"],
    [{ filter: { state: "Error" }, limit: 1001 }, "limit: expected a whole number from 1 to 1000"],
    [{ filter: { state: "Error" }, limit: 2.5 }, "limit: expected a whole number from 1 to 1000"],
    [{ filter: { state: "Error" }, limit: "10" }, "limit: expected a whole number from 1 to 1000"],
    [{ filter: { state: "Error" }, reason: "x".repeat(201) }, "reason: expected at most 200 characters"],
    [{ filter: { state: "Error" }, reason: "line\nbreak" }, "reason: expected no control characters"],
    // C1 controls, the line separator and a bidi override: each can end or disguise a line of the audit trail.
    [{ filter: { state: "Error" }, reason: "next\u0085line" }, "reason: expected no control characters"],
    [{ filter: { state: "Error" }, reason: "csi\u009b31m" }, "reason: expected no control characters"],
    [{ filter: { state: "Error" }, reason: "a\u2028b" }, "reason: expected no control characters"],
    [{ filter: { state: "Error" }, reason: "a\u202eb" }, "reason: expected no control characters"],
    [{ filter: { state: "Error" }, continuation: 12 }, "continuation: expected the continuation"],
    [{ filter: { state: "Error" }, force: true }, '(root): Unrecognized key: "force"'],
    [[], "(root): JSON array of 0 items, expected a JSON object"],
  ])("refuses %j naming the field", (body, message) => {
    expect(refusal("retry", body)).toContain(message);
  });

  it("records a bulk action in each order's audit detail, with the reason when there is one", () => {
    expect(bulkDetail("retry", "payment outage")).toBe("bulk retry: payment outage");
    expect(bulkDetail("cancel", undefined)).toBe("bulk cancel");
  });
});
