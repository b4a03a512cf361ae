import { describe, expect, it } from "vitest";
import {
  agentRequestId,
  checkReply,
  claim,
  compensationStepDispatched,
  compensationStepDone,
  expire,
  stepDispatched,
  stepFailedPermanent,
  stepSucceeded,
  type AgentReply,
  type StateRecord,
} from "../../../src/domain";
import { at, claimedRecord, ok, processingRecord } from "../../support/domain";
import { FIXTURE_3, FIXTURE_WITHOUT_UNDO } from "../../support/fixtureWorkflows";

/** The records below are on the builders' default workflow, a three-step fixture: steps 0, 1 and 2 (LAST). */
const workflow = FIXTURE_3;
const LAST = workflow.steps.length - 1;
const stepName = (index: number) => workflow.steps[index]!.name;

/**
 * Attempt 1 dispatched step 0 and timed out; attempt 2 ran step 0 and is now waiting on step 1. So attempt 1 sent
 * only step 0's request, attempt 2 sent steps 0 and 1, and nobody has sent step 2's.
 */
function secondAttemptAtStep1(): StateRecord {
  const first = claimedRecord();
  const dispatched = ok(
    stepDispatched(first, { now: at(2), lockedBy: first.lockedBy!, stepIndex: 0, stepTimeoutSeconds: 30 }),
  );
  const expired = ok(
    expire(dispatched, { now: at(40), expectedLockedBy: first.lockedBy!, maxFailures: 3, backoffSeconds: 1 }),
  );
  const second = ok(claim(expired, { now: at(50), claimTimeoutSeconds: 60 }));
  const lockedBy = second.lockedBy!;
  const step0 = ok(stepDispatched(second, { now: at(51), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }));
  const done0 = ok(
    stepSucceeded(step0, { now: at(52), lockedBy, stepIndex: 0, result: {}, compensation: null }),
  );
  return ok(stepDispatched(done0, { now: at(53), lockedBy, stepIndex: 1, stepTimeoutSeconds: 30 }));
}

/** A consistent reply (ids that fit together) for one step of one attempt. */
function reply(instanceId: string, stepIndex: number, kind: "do" | "undo" = "do"): AgentReply {
  return {
    requestId: agentRequestId(instanceId, stepIndex, kind),
    orderId: instanceId.split(":")[0]!,
    instanceId,
    stepIndex,
    kind,
    outcome: "ok",
  };
}

describe("checkReply", () => {
  // Attempt 1 holds the record; every step before the last succeeded, the last is dispatched and awaits its answer.
  const waiting = processingRecord(LAST, true);
  const attempt = waiting.lockedBy!;

  it("accepts the answer to the request the attempt dispatched, and a repeat of an earlier one", () => {
    expect(waiting.workflow).toEqual({ name: workflow.name, version: workflow.version });
    expect(waiting.steps[LAST]!.requestId).toBe(`${attempt}:${LAST}:do`);
    expect(checkReply(waiting, reply(attempt, LAST))).toEqual({ verdict: "current" });
    expect(checkReply(waiting, reply(attempt, 0))).toEqual({ verdict: "current" });
  });

  it("refuses what no request of the record asked for", () => {
    const cases: Array<[AgentReply, StateRecord | undefined, string]> = [
      [
        reply(attempt, LAST, "undo"),
        waiting,
        `no such request was dispatched (${stepName(LAST)} undo last dispatched as none)`,
      ],
      [reply("ORD-1001:2", LAST), waiting, "attempt 2 was never started (the order is at attempt 1)"],
      [reply(attempt, 7), waiting, `the order has ${workflow.steps.length} steps`],
      [reply(attempt, LAST), undefined, "order ORD-1001 does not exist"],
    ];
    for (const [forged, record, reason] of cases) {
      expect(checkReply(record, forged), reason).toEqual({
        verdict: "unknown",
        reason: expect.stringContaining(reason),
      });
    }
  });

  it("refuses an answer for a step the attempt has not dispatched yet, which could otherwise wait for it", () => {
    const atFirstStep = processingRecord(0, true);
    expect(checkReply(atFirstStep, reply(atFirstStep.lockedBy!, 1))).toMatchObject({
      verdict: "unknown",
      reason: expect.stringContaining(`${stepName(1)} do last dispatched as none`),
    });
  });

  it("drops answers to an attempt that is over, whatever they say", () => {
    // The Supervisor expired attempt 1; attempt 2 claimed the record and has dispatched nothing yet.
    const expired = ok(
      expire(waiting, { now: at(100), expectedLockedBy: attempt, maxFailures: 3, backoffSeconds: 1 }),
    );
    const second = ok(claim(expired, { now: at(200), claimTimeoutSeconds: 60 }));
    expect(second.lockedBy).toBe("ORD-1001:2");
    expect(checkReply(second, reply(attempt, LAST))).toMatchObject({ verdict: "stale" });
    // Still attempt 1, but the Supervisor has let go of it: nobody is waiting.
    expect(checkReply(expired, reply(attempt, LAST))).toMatchObject({
      verdict: "stale",
      reason: expect.stringContaining("no longer holds the order"),
    });
  });

  it("asks whether an earlier attempt dispatched the request before calling its answer stale", () => {
    const record = secondAttemptAtStep1();
    expect(record.attempt).toBe(2);
    // A late answer to what attempt 1 did send: dropped quietly, no alarm.
    expect(checkReply(record, reply("ORD-1001:1", 0))).toEqual({
      verdict: "stale",
      reason: "step 0 do of ORD-1001:1: attempt 1 is over (now 2)",
    });
    // Attempt 1 never got past step 0, and nobody ever sent step 2: answers to those were written by someone else.
    expect(checkReply(record, reply("ORD-1001:1", 1))).toEqual({
      verdict: "unknown",
      reason: `step 1 do of ORD-1001:1: no such request was dispatched (attempt 1 had not reached ${stepName(1)} do)`,
    });
    expect(checkReply(record, reply("ORD-1001:1", 2))).toEqual({
      verdict: "unknown",
      reason: `step 2 do of ORD-1001:1: no such request was dispatched (${stepName(2)} do last dispatched as none)`,
    });
    expect(checkReply(record, reply("ORD-1001:1", 0, "undo"))).toMatchObject({ verdict: "unknown" });
    // The current attempt's own request is still current.
    expect(checkReply(record, reply("ORD-1001:2", 1))).toEqual({ verdict: "current" });
  });

  it("tells a late answer to an earlier attempt's undo from one to an undo that attempt never reached", () => {
    // Attempt 1 refused at the last step (2), undid step 1 and timed out on it; attempt 2 undid step 1 and waits on step 0.
    const failed = ok(
      stepFailedPermanent(waiting, {
        now: at(20),
        lockedBy: attempt,
        stepIndex: LAST,
        error: { code: "Refused", message: "no courier" },
      }),
    );
    const undo1 = ok(
      compensationStepDispatched(failed, {
        now: at(21),
        lockedBy: attempt,
        stepIndex: 1,
        stepTimeoutSeconds: 30,
      }),
    );
    const expired = ok(
      expire(undo1, { now: at(60), expectedLockedBy: attempt, maxFailures: 3, backoffSeconds: 1 }),
    );
    const second = ok(claim(expired, { now: at(70), claimTimeoutSeconds: 60 }));
    const lockedBy = second.lockedBy!;
    const redo1 = ok(
      compensationStepDispatched(second, { now: at(71), lockedBy, stepIndex: 1, stepTimeoutSeconds: 30 }),
    );
    const done1 = ok(compensationStepDone(redo1, { now: at(72), lockedBy, stepIndex: 1, result: {} }));
    const undo0 = ok(
      compensationStepDispatched(done1, { now: at(73), lockedBy, stepIndex: 0, stepTimeoutSeconds: 30 }),
    );
    expect(checkReply(undo0, reply(attempt, 1, "undo"))).toMatchObject({ verdict: "stale" });
    expect(checkReply(undo0, reply(attempt, 0, "undo"))).toEqual({
      verdict: "unknown",
      reason: `step 0 undo of ${attempt}: no such request was dispatched (attempt 1 had not reached ${stepName(0)} undo)`,
    });
    expect(checkReply(undo0, reply(lockedBy, 0, "undo"))).toEqual({ verdict: "current" });
  });

  it("accepts the answer to an undo the attempt dispatched", () => {
    const failed = ok(
      stepFailedPermanent(waiting, {
        now: at(20),
        lockedBy: attempt,
        stepIndex: LAST,
        error: { code: "Refused", message: "no courier" },
      }),
    );
    const undoing = ok(
      compensationStepDispatched(failed, {
        now: at(21),
        lockedBy: attempt,
        stepIndex: 1,
        stepTimeoutSeconds: 30,
      }),
    );
    expect(undoing.steps[1]!.undo!.requestId).toBe(`${attempt}:1:undo`);
    expect(checkReply(undoing, reply(attempt, 1, "undo"))).toEqual({ verdict: "current" });
    expect(checkReply(undoing, reply(attempt, 0, "undo"))).toMatchObject({ verdict: "unknown" });
  });

  it("knows an earlier attempt reached an undo when the step above it declares none", () => {
    // The fixture's steps 1 and 3 declare no undo. Attempt 1 refused at the last, undid step 2, dispatched the undo
    // of step 0 and timed out on it; attempt 2 dispatched it again. Step 1 in between never had an undo to dispatch.
    const on = FIXTURE_WITHOUT_UNDO;
    const refusing = processingRecord(3, true, on);
    const first = refusing.lockedBy!;
    const failed = ok(
      stepFailedPermanent(refusing, {
        now: at(20),
        lockedBy: first,
        stepIndex: 3,
        error: { code: "Refused", message: "no" },
      }),
    );
    const undo2 = ok(
      compensationStepDispatched(failed, {
        now: at(21),
        lockedBy: first,
        stepIndex: 2,
        stepTimeoutSeconds: 30,
      }),
    );
    const done2 = ok(compensationStepDone(undo2, { now: at(22), lockedBy: first, stepIndex: 2, result: {} }));
    const undo0 = ok(
      compensationStepDispatched(done2, {
        now: at(23),
        lockedBy: first,
        stepIndex: 0,
        stepTimeoutSeconds: 30,
      }),
    );
    const expired = ok(
      expire(undo0, { now: at(60), expectedLockedBy: first, maxFailures: 3, backoffSeconds: 1 }),
    );
    const second = ok(claim(expired, { now: at(70), claimTimeoutSeconds: 60 }));
    const redo0 = ok(
      compensationStepDispatched(second, {
        now: at(71),
        lockedBy: second.lockedBy!,
        stepIndex: 0,
        stepTimeoutSeconds: 30,
      }),
    );
    // Attempt 1's late answer to what it did send: dropped, no alarm.
    expect(checkReply(redo0, reply(first, 0, "undo"))).toEqual({
      verdict: "stale",
      reason: `step 0 undo of ${first}: attempt 1 is over (now 2)`,
    });
    expect(checkReply(redo0, reply(first, 1, "undo"))).toMatchObject({ verdict: "unknown" });
  });

  it("never trusts a claim it cannot check: a fresh claim has no request on any step", () => {
    const fresh = claimedRecord();
    for (let step = 0; step < workflow.steps.length; step++) {
      expect(checkReply(fresh, reply(fresh.lockedBy!, step)).verdict).toBe("unknown");
    }
  });
});
