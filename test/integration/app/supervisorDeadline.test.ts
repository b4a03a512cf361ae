/**
 * The Supervisor's recovery queue against the embedded emulators: a deadline notice makes the Supervisor decide on
 * exactly that record, with a point read and the sweep's fenced decision, and on nothing else.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import {
  claim,
  orderWorkflowV1,
  stepDispatched,
  submit,
  type DeadlineMessage,
  type StateRecord,
} from "../../../src/domain";
import { handleDeadline } from "../../../src/supervisor/deadline";
import { at, sampleOrder } from "../../support/domain";
import { drain, startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack({ SUPERVISOR_MAX_FAILURES: "1", STEP_TIMEOUT_SECONDS: "30" });
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  await drain(stack.bus, "alerts");
  await drain(stack.bus, "status-demo");
});

/** An order whose attempt 1 dispatched step 0 at `dispatchedAt` (deadline 30 s later), `failures` failed before. */
async function waitingOnStep0(orderId: string, dispatchedAt: Date, failures = 0): Promise<StateRecord> {
  const { states } = stack.deps;
  await states.create({
    ...submit(sampleOrder({ orderId, replyTo: "status-demo" }), { now: at(0), workflow: orderWorkflowV1 }),
    failureCount: failures,
  });
  await states.apply(orderId, (r) => claim(r, { now: dispatchedAt, claimTimeoutSeconds: 5 }));
  const outcome = await states.apply(orderId, (r) =>
    stepDispatched(r, { now: dispatchedAt, lockedBy: `${orderId}:1`, stepIndex: 0, stepTimeoutSeconds: 30 }),
  );
  if (outcome.kind !== "written") throw new Error(`could not dispatch ${orderId}: ${outcome.kind}`);
  return outcome.record;
}

const noticeFor = (record: StateRecord): DeadlineMessage => ({
  orderId: record.orderId,
  instanceId: record.lockedBy!,
  stepIndex: 0,
  kind: "do",
  completeBy: record.completeBy!,
});

it("sends an attempt whose step passed its deadline back to Pending, with one failure counted", async () => {
  const record = await waitingOnStep0("DL-1", at(100));
  stack.deps.now = () => at(131);
  const outcome = await handleDeadline(stack.deps, stack.context("deadline"), noticeFor(record));
  expect(outcome).toEqual({ kind: "expired", processState: "Pending" });
  const after = await stack.deps.states.get("DL-1");
  expect(after).toMatchObject({ processState: "Pending", lockedBy: null, failureCount: 1 });
  expect(after!.history.at(-1)).toMatchObject({ event: "expired", by: "supervisor" });
});

it("sends the last allowed failure to Error, with its alert and status, as the sweep does", async () => {
  const record = await waitingOnStep0("DL-2", at(200), 1);
  stack.deps.now = () => at(231);
  expect(await handleDeadline(stack.deps, stack.context("deadline"), noticeFor(record))).toEqual({
    kind: "expired",
    processState: "Error",
  });
  expect(await drain(stack.bus, "alerts")).toEqual([
    expect.objectContaining({ kind: "Error", orderId: "DL-2", processState: "Error" }),
  ]);
  expect(await drain(stack.bus, "status-demo")).toContainEqual(
    expect.objectContaining({ orderId: "DL-2", status: "failed" }),
  );
  expect((await stack.deps.states.get("DL-2"))!.alert?.sentAt).not.toBeNull();
});

it("leaves alone a record that moved on: answered and re-dispatched, reclaimed, or not yet due", async () => {
  const record = await waitingOnStep0("DL-3", at(300));
  const notice = noticeFor(record);
  // Not yet due (a notice earlier than the record's deadline, as a clock behind the timer's would see it).
  stack.deps.now = () => at(329);
  expect(await handleDeadline(stack.deps, stack.context("deadline"), notice)).toMatchObject({
    kind: "movedOn",
    reason: expect.stringContaining("completeBy is"),
  });
  // Another attempt holds it now.
  stack.deps.now = () => at(400);
  const other = { ...notice, instanceId: "DL-3:7" };
  expect(await handleDeadline(stack.deps, stack.context("deadline"), other)).toEqual({
    kind: "movedOn",
    reason: "held by DL-3:1, not DL-3:7",
  });
  // No such order.
  expect(
    await handleDeadline(stack.deps, stack.context("deadline"), {
      ...notice,
      orderId: "DL-NONE",
      instanceId: "DL-NONE:1",
    }),
  ).toEqual({ kind: "movedOn", reason: "no state record for DL-NONE" });
  const after = await stack.deps.states.get("DL-3");
  expect(after).toMatchObject({ processState: "Processing", lockedBy: "DL-3:1", failureCount: 0 });
  expect(after!._etag).toBe(record._etag);
});

it("refuses what is not a deadline notice of this app, naming the field", async () => {
  const record = await waitingOnStep0("DL-4", at(500));
  stack.deps.now = () => at(600);
  const notice = noticeFor(record);
  for (const [message, field] of [
    [{ ...notice, instanceId: "DL-OTHER:1" }, "instanceId"],
    [{ ...notice, orderId: "../etc" }, "orderId"],
    [{ ...notice, completeBy: "soon" }, "completeBy"],
    [{ ...notice, extra: 1 }, "extra"],
    ["not json", "(root)"],
  ] as const) {
    const outcome = await handleDeadline(stack.deps, stack.context("deadline"), message);
    expect(outcome.kind).toBe("invalid");
    expect((outcome as { reason: string }).reason).toContain(field);
  }
  expect(await stack.deps.states.get("DL-4")).toMatchObject({ processState: "Processing", failureCount: 0 });
});
