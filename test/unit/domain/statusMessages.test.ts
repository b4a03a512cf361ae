import { describe, expect, it } from "vitest";
import {
  andThen,
  claim,
  nextForwardMove,
  compensated,
  compensationStepDispatched,
  compensationStepDone,
  compensationStepFailed,
  expire,
  operatorRetry,
  processed,
  stepDispatched,
  stepFailedPermanent,
  stepFailedTransient,
  stepSucceeded,
  type StateRecord,
} from "../../../src/domain";
import { statusMessagesFromHistory } from "../../../src/domain/statusMessages";
import { at, ok, pendingRecord, processingRecord, sampleOrder } from "../../support/domain";
import { FIXTURE_3 } from "../../support/fixtureWorkflows";

/** The records below are on the builders' default workflow, a three-step fixture, not the sample process. */
const workflow = FIXTURE_3;
const STEPS = workflow.steps.length;
/** One stepSucceeded per step from `from` on. */
const succeeded = (from = 0) => Array<string>(STEPS - from).fill("stepSucceeded");

const statuses = (record: StateRecord) => statusMessagesFromHistory(record).map((m) => m.status);
const error = { code: "PaymentDeclined", message: "over the limit" };

/** Runs the steps from `from` of the current attempt to success. */
function succeedFrom(record: StateRecord, from: number, t: number): StateRecord {
  const lockedBy = record.lockedBy!;
  let r = record;
  for (let i = from; i < r.steps.length; i++) {
    r = ok(stepDispatched(r, { now: at(t + i), lockedBy, stepIndex: i, stepTimeoutSeconds: 30 }));
    r = ok(stepSucceeded(r, { now: at(t + i), lockedBy, stepIndex: i, result: {}, compensation: {} }));
  }
  return r;
}

/** A Processing record whose step `stepIndex` was dispatched and failed transiently, so completeBy has passed. */
function failedTransiently(record: StateRecord, stepIndex: number, t: number): StateRecord {
  const lockedBy = record.lockedBy!;
  const dispatched = ok(stepDispatched(record, { now: at(t), lockedBy, stepIndex, stepTimeoutSeconds: 30 }));
  return ok(
    stepFailedTransient(dispatched, {
      now: at(t + 1),
      lockedBy,
      stepIndex,
      error: { code: "Unavailable", message: "503" },
    }),
  );
}

const expireAt = (record: StateRecord, t: number, maxFailures = 3) =>
  ok(expire(record, { now: at(t), expectedLockedBy: record.lockedBy!, maxFailures, backoffSeconds: 1 }));

describe("statusMessagesFromHistory", () => {
  it("gives the happy path's sequence, as the submitter receives it, with the transitions' times and states", () => {
    const record = ok(processed(processingRecord(STEPS), { now: at(20), lockedBy: "ORD-1001:1" }));
    expect(record.workflow.name).toBe(workflow.name);
    const messages = statusMessagesFromHistory(record);
    expect(messages.map((m) => m.status)).toEqual(["received", "processing", ...succeeded(), "processed"]);
    expect(messages[0]).toEqual({
      orderId: "ORD-1001",
      status: "received",
      processState: "Pending",
      at: record.history[0]!.at,
      detail: null,
    });
    expect(messages[1]).toMatchObject({
      processState: "Processing",
      detail: `attempt 1, ${workflow.steps[0]!.name}`,
    });
    expect(messages.slice(2, 2 + STEPS).map((m) => m.detail)).toEqual(workflow.steps.map((s) => s.name));
    expect(messages[2 + STEPS]).toMatchObject({ processState: "Processed", at: at(20).toISOString() });
  });

  it("sends nothing to an order without replyTo", () => {
    const record = processingRecord(STEPS);
    expect(statusMessagesFromHistory({ ...record, replyTo: null })).toEqual([]);
    expect(pendingRecord(sampleOrder({ replyTo: undefined })).replyTo).toBeNull();
  });

  it("says processing once per attempt, whichever step the attempt resumes at", () => {
    // Attempt 1 fails on step 0 and expires; attempt 2 starts over at step 0.
    let record = failedTransiently(processingRecord(0), 0, 2);
    record = expireAt(record, 5);
    record = ok(claim(record, { now: at(10), claimTimeoutSeconds: 60 }));
    record = succeedFrom(record, 0, 11);
    expect(statuses(record)).toEqual(["received", "processing", "processing", ...succeeded()]);
    expect(statusMessagesFromHistory(record)[2]!.detail).toBe(`attempt 2, ${workflow.steps[0]!.name}`);

    // Attempt 1 fails on step 1; attempt 2 resumes at step 1 and still tells the submitter it started.
    let resumed = failedTransiently(processingRecord(1), 1, 5);
    resumed = expireAt(resumed, 8);
    resumed = ok(claim(resumed, { now: at(12), claimTimeoutSeconds: 60 }));
    resumed = succeedFrom(resumed, 1, 13);
    expect(statuses(resumed)).toEqual([
      "received",
      "processing",
      "stepSucceeded",
      "processing",
      ...succeeded(1),
    ]);
    expect(statusMessagesFromHistory(resumed)[3]!.detail).toBe(`attempt 2, ${workflow.steps[1]!.name}`);
  });

  it("says the last step's success and the end, written together, as one processed", () => {
    // As recordReply writes it: the answer and the next move (here the end) in one transition, at one time.
    const last = processingRecord(STEPS - 1, true);
    const lockedBy = last.lockedBy!;
    const record = ok(
      andThen(
        stepSucceeded(last, { now: at(30), lockedBy, stepIndex: STEPS - 1, result: {}, compensation: {} }),
        (s) => nextForwardMove(s, { now: at(30), lockedBy, stepTimeoutSeconds: 30 }),
      ),
    );
    expect(record.processState).toBe("Processed");
    expect(statuses(record).slice(-2)).toEqual(["stepSucceeded", "processed"]);
    expect(statusMessagesFromHistory(record).filter((m) => m.at === at(30).toISOString())).toEqual([
      expect.objectContaining({ status: "processed" }),
    ]);
  });

  it("says compensating, then compensated, for a permanent refusal after a completed step", () => {
    const record = processingRecord(1, true);
    const lockedBy = record.lockedBy!;
    let r = ok(stepFailedPermanent(record, { now: at(11), lockedBy, stepIndex: 1, error }));
    expect(r.processState).toBe("Compensating");
    r = ok(compensationStepDispatched(r, { now: at(12), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }));
    r = ok(compensationStepDone(r, { now: at(13), lockedBy, stepIndex: 0, result: {} }));
    r = ok(compensated(r, { now: at(14), lockedBy }));
    const messages = statusMessagesFromHistory(r);
    expect(messages.map((m) => m.status)).toEqual([
      "received",
      "processing",
      "stepSucceeded",
      "compensating",
      "compensated",
    ]);
    expect(messages[3]).toMatchObject({
      processState: "Compensating",
      detail: expect.stringContaining("PaymentDeclined"),
    });
  });

  it("says compensated at once when the first step is refused and there is nothing to undo", () => {
    const record = processingRecord(0, true);
    const r = ok(
      stepFailedPermanent(record, { now: at(11), lockedBy: record.lockedBy!, stepIndex: 0, error }),
    );
    expect(r.processState).toBe("Compensated");
    expect(statuses(r)).toEqual(["received", "processing", "compensated"]);
  });

  it("says compensationFailed for a permanent undo failure, and nothing for a transient one", () => {
    const record = processingRecord(1, true);
    const lockedBy = record.lockedBy!;
    let r = ok(stepFailedPermanent(record, { now: at(11), lockedBy, stepIndex: 1, error }));
    r = ok(compensationStepDispatched(r, { now: at(12), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }));
    const transient = ok(
      compensationStepFailed(r, { now: at(13), lockedBy, stepIndex: 0, error, outcome: "transient" }),
    );
    expect(statuses(transient).at(-1)).toBe("compensating");
    const permanent = ok(
      compensationStepFailed(r, { now: at(13), lockedBy, stepIndex: 0, error, outcome: "permanent" }),
    );
    expect(permanent.processState).toBe("CompensationFailed");
    expect(statusMessagesFromHistory(permanent).at(-1)).toMatchObject({
      status: "compensationFailed",
      processState: "CompensationFailed",
    });
  });

  it("says failed when the Supervisor exhausts the retries, and processing again after an operator retry", () => {
    let record = failedTransiently(processingRecord(0), 0, 2);
    record = expireAt(record, 5, 0);
    expect(record.processState).toBe("Error");
    expect(statusMessagesFromHistory(record).at(-1)).toMatchObject({
      status: "failed",
      processState: "Error",
      detail: expect.stringContaining("failure 1 of 1"),
    });
    record = ok(operatorRetry(record, { now: at(30), operator: "ops" }));
    record = ok(claim(record, { now: at(31), claimTimeoutSeconds: 60 }));
    record = succeedFrom(record, 0, 32);
    record = ok(processed(record, { now: at(40), lockedBy: record.lockedBy! }));
    expect(statuses(record)).toEqual([
      "received",
      "processing",
      "failed",
      "processing",
      ...succeeded(),
      "processed",
    ]);
  });

  it("says compensationFailed when the Supervisor exhausts the retries of an undo", () => {
    const record = processingRecord(1, true);
    const lockedBy = record.lockedBy!;
    let r = ok(stepFailedPermanent(record, { now: at(11), lockedBy, stepIndex: 1, error }));
    r = ok(compensationStepDispatched(r, { now: at(12), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }));
    r = ok(compensationStepFailed(r, { now: at(13), lockedBy, stepIndex: 0, error, outcome: "transient" }));
    r = expireAt(r, 14, 0);
    expect(r.processState).toBe("CompensationFailed");
    expect(statuses(r)).toEqual([
      "received",
      "processing",
      "stepSucceeded",
      "compensating",
      "compensationFailed",
    ]);
  });
});
