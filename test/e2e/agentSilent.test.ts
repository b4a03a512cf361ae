/**
 * Failure catalogue: the agent is silent because its remote service hangs. Every call the payment agent makes
 * inside the step's deadline times out, so it never replies; the orchestration's durable timer ends the attempt
 * at completeBy, the Supervisor counts the failure and schedules a retry, and attempt 2 (service healthy again)
 * finishes the order from the step that hung, without repeating the step that had already succeeded.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { e2eOrder, expectOneSetOfEffects, forOrder } from "../support/e2eOrders";
import { faultOn, stepIndex } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { waitUntilPast } from "../support/wait";

const it = e2eTest();

// From the declaration: the payment step is the one whose service hangs.
const CHARGE = stepIndex("chargePayment");
const charge = orderWorkflowV1.steps[CHARGE]!;
const names = orderWorkflowV1.steps.map((s) => s.name);
/** The trail of steps `from` to `to` (excluded) of `attempt`, each dispatched and answered. */
const ran = (attempt: number, from: number, to: number) =>
  names.slice(from, to).flatMap((n) => [`${attempt} stepDispatched ${n}`, `${attempt} stepSucceeded ${n}`]);

it("a hung service times the step out; the Supervisor's retry finishes the order on attempt 2", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("SILENT");
  const id = order.orderId;
  const hang = await e2e.faults.add({
    ...faultOn(CHARGE),
    orderId: id,
    kind: "hang",
  });
  expect((await e2e.submit(order)).status).toBe(202);

  // Attempt 1 records the charge's dispatch and deadline. The agent starts no call after that deadline, so once
  // it has passed, healing the service cannot help attempt 1: only a retry can finish the order.
  const dispatched = await e2e.waitForRecord(
    id,
    (r) => r.attempt === 1 && r.steps[CHARGE]!.status === "Dispatched",
    "the charge dispatched on attempt 1",
  );
  await waitUntilPast(dispatched.steps[CHARGE]!.completeBy!);
  const hits = (await e2e.faults.list()).find((f) => f.id === hang.id)!.hits;
  await e2e.faults.remove(hang.id);
  // Each agent call hung until its 1 s attempt timeout, and the agent retried within the 3 s step deadline.
  expect(hits).toBeGreaterThanOrEqual(2);

  const record = await e2e.waitForState(id, ["Processed"]);
  expect(record).toMatchObject({ attempt: 2, failureCount: 1, lockedBy: null, completeBy: null });
  expect(record.steps.map((s) => s.status)).toEqual(names.map(() => "Succeeded"));
  // The audit trail: attempt 1 ends with the Supervisor's expiry, and no reply (neither success nor a transient
  // failure) was ever recorded for it; attempt 2 resumes at the charge.
  expect(
    record.history.map((h) => `${h.attempt} ${h.event} ${h.detail?.split(" ")[0] ?? ""}`.trim()),
  ).toEqual([
    "0 submitted",
    `1 claimed ${id}:1`,
    ...ran(1, 0, CHARGE),
    `1 stepDispatched ${charge.name}`,
    "1 expired attempt",
    `2 claimed ${id}:2`,
    ...ran(2, CHARGE, names.length),
    "2 processed",
  ]);
  expect(record.history.find((h) => h.event === "expired")).toMatchObject({
    by: "supervisor",
    from: "Processing",
    to: "Pending",
  });
  // The agent stayed silent on purpose: it gave up at the deadline rather than reply late.
  expect(
    e2e.logs.some((l) => l.message.includes(`no reply for ${id}:1:${CHARGE}:do: completeBy passed`)),
  ).toBe(true);

  // Each side effect applied once; the hung calls never reached the service, so every key saw one request.
  await expectOneSetOfEffects(e2e, id);

  await statuses.waitFor((m) => forOrder(id)(m) && (m as { status: string }).status === "processed");
  expect((await alerts.all()).filter(forOrder(id))).toEqual([]);
}, 40_000);
