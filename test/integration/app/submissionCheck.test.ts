/**
 * The Supervisor's check that every stored order was submitted (src/supervisor/submissions.ts), against the
 * embedded Cosmos DB and Service Bus emulators: an order document with no state record (its submission never
 * completed) gets one, once, and the check goes on from its checkpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSubmissions } from "../../../src/supervisor/submissions";
import { SUBMISSION_CHECK } from "../../../src/supervisor/submissionCheck";
import { sweep } from "../../../src/supervisor/sweep";
import { submitOrder } from "../../../src/submission/submit";
import { at, sampleOrder, SAMPLE_REPLY_TO } from "../../support/domain";
import { drain, startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack();
});
afterAll(() => stack?.stop());

/** A moment at which an order submitted at `submittedAt` is past the check's grace period. */
const afterGrace = (submittedAt: Date) =>
  new Date(submittedAt.getTime() + (SUBMISSION_CHECK.graceSeconds + 1) * 1000);

describe("the Supervisor's check of submissions", () => {
  it("gives a stored order with no state record its record and its 'received', once; a submitted order is left alone", async () => {
    const { deps } = stack;
    const log = stack.context("submissionCheck");
    // ORPHAN-1: the front door stored it, and its message never made it (a send that failed, a client gone).
    const orphan = sampleOrder({ orderId: "ORPHAN-1", replyTo: SAMPLE_REPLY_TO });
    deps.now = () => at(0);
    await deps.orders.ensure(orphan, at(0));
    // DONE-1: submitted the ordinary way.
    await submitOrder(deps, log, sampleOrder({ orderId: "DONE-1", replyTo: SAMPLE_REPLY_TO }));
    await drain(stack.bus, SAMPLE_REPLY_TO);
    const done = await deps.states.get("DONE-1");

    // Within the grace period the missing record is not yet missing: the queue's path may still be on its way.
    deps.now = () => at(SUBMISSION_CHECK.graceSeconds - 1);
    expect(await checkSubmissions(deps, log)).toMatchObject({ completed: 0 });
    expect(await deps.states.get("ORPHAN-1")).toBeUndefined();

    deps.now = () => afterGrace(at(0));
    const report = await checkSubmissions(deps, log);
    expect(report).toMatchObject({ checked: 2, completed: 1 });
    expect(await deps.states.get("ORPHAN-1")).toMatchObject({
      orderId: "ORPHAN-1",
      processState: "Pending",
      attempt: 0,
      replyTo: SAMPLE_REPLY_TO,
    });
    expect(await deps.states.get("DONE-1")).toEqual(done);
    expect(await drain(stack.bus, SAMPLE_REPLY_TO)).toEqual([
      expect.objectContaining({ orderId: "ORPHAN-1", status: "received" }),
    ]);

    // The checkpoint moved past both: the next check reads nothing again.
    expect(await checkSubmissions(deps, log)).toMatchObject({ checked: 0, completed: 0 });
    expect((await deps.submissionsChecked.read())?.value).toBe(report.checkedUpTo);
  });

  it("runs in the leader's sweep, and a sweep that stops at its page limit leaves the rest to the next", async () => {
    const { deps } = stack;
    const base = at(10_000);
    const perSweep = 2 * SUBMISSION_CHECK.maxPages;
    // Two orders in each second: a page may end between two documents submitted in the same millisecond.
    const orderIds = Array.from({ length: perSweep + 3 }, (_, i) => `ORPHAN-PAGE-${i}`);
    for (const [i, orderId] of orderIds.entries())
      await deps.orders.ensure(sampleOrder({ orderId }), new Date(base.getTime() + Math.floor(i / 2) * 1000));
    const small = stack.dependencies({ SUPERVISOR_PAGE_SIZE: "2" });
    small.now = () => afterGrace(new Date(base.getTime() + orderIds.length * 1000));

    const first = await sweep(small, stack.context("sweep"), "leader");
    expect(first).toMatchObject({ leader: true });
    expect(first.submissionsCompleted).toBeGreaterThanOrEqual(perSweep - 1);
    expect(first.submissionsCompleted).toBeLessThan(orderIds.length);
    const second = await sweep(small, stack.context("sweep"), "leader");
    expect(first.submissionsCompleted + second.submissionsCompleted).toBe(orderIds.length);
    for (const orderId of orderIds)
      expect(await deps.states.get(orderId)).toMatchObject({ processState: "Pending" });
  });
});
