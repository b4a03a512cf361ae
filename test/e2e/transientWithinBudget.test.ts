/**
 * Failure catalogue: transient errors within the agent's budget. Each remote service answers 5xx twice before it
 * works, fewer times than AGENT_MAX_ATTEMPTS (3): the agents' own retries absorb the errors inside the step
 * deadline, so neither the Scheduler nor the Supervisor ever sees a failure.
 */
import { expect } from "vitest";
import { orderWorkflowV1 } from "../../src/domain";
import { E2E_SETTINGS } from "../support/e2e";
import { e2eOrder, expectOneSetOfEffects, forOrder } from "../support/e2eOrders";
import { processedStatuses } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";

const it = e2eTest();

/** Each forward call of the declaration (src/domain/process.ts), once per service and operation. */
const calls = [
  ...new Map(orderWorkflowV1.steps.map((s) => [`${s.agent}/${s.doOperation}`, s] as const)).values(),
];
/** The 5xx each call answers in turn: the simulator's default (503), then 500, then 502, and so on. */
const STATUSES = [undefined, 500, 502] as const;

it("two 5xx per service are retried away by the agents: Processed on attempt 1, failureCount 0", async ({
  e2e,
  alerts,
  statuses,
}) => {
  const order = e2eOrder("BLIP");
  const id = order.orderId;
  const failuresPerCall = Number(E2E_SETTINGS.AGENT_MAX_ATTEMPTS) - 1;
  expect(failuresPerCall).toBe(2);
  const faults = [];
  for (const [i, step] of calls.entries()) {
    const status = STATUSES[i % STATUSES.length];
    faults.push(
      await e2e.faults.add({
        service: step.agent,
        operation: step.doOperation,
        orderId: id,
        kind: "transient",
        ...(status === undefined ? {} : { status }),
        count: failuresPerCall,
      }),
    );
  }
  expect((await e2e.submit(order)).status).toBe(202);

  const record = await e2e.waitForState(id, ["Processed"]);
  expect(record).toMatchObject({
    attempt: 1,
    failureCount: 0,
    lockedBy: null,
    completeBy: null,
    lastError: null,
  });
  expect(record.steps.map((s) => [s.name, s.status, s.lastError])).toEqual(
    orderWorkflowV1.steps.map((s) => [s.name, "Succeeded", null]),
  );
  expect(record.history.map((h) => h.event)).not.toContain("stepFailedTransient");

  // Every fault fired in full: each agent really did fail twice before it succeeded.
  const after = await e2e.faults.list();
  for (const fault of faults)
    expect(after.find((f) => f.id === fault.id)).toMatchObject({ hits: 2, remaining: 0 });
  // The 5xx answered in front of the services, so each operation ran once, on the third call.
  await expectOneSetOfEffects(e2e, id);

  await statuses.waitFor((m) => forOrder(id)(m) && (m as { status: string }).status === "processed");
  const seen = (await statuses.all()).filter(forOrder(id)) as Array<{ status: string }>;
  expect(seen.map((s) => s.status)).toEqual(processedStatuses());
  expect((await alerts.all()).filter(forOrder(id))).toEqual([]);
}, 30_000);
