/**
 * Hostile input on `agent-replies`: replies that answer no request the Scheduler sent. Each one is refused before
 * any durable call (the orchestration keeps running, nothing is terminated or raised), set aside on rejected-messages, and raises
 * one InvalidMessage alert of bounded size that names the mismatch; the order, its state record and the ledger
 * stay as they were. The orders wait on a hanging service for the whole file, so their records cannot move.
 * What a reply says of itself reaches the alert, the rejection and the log lines escaped, on one line.
 */
import { expect } from "vitest";
import { agentRequestId, orderWorkflowV1 } from "../../src/domain";
import { type E2E } from "../support/e2e";
import { e2eOrder, orderSnapshot } from "../support/e2eOrders";
import { sendToQueue, waitForRejected } from "../support/e2eQueues";
import { faultOn } from "../support/expectedProcess";
import { e2eTest, type E2EFixtures } from "../support/fixtures";
import { RAW_CONTROL } from "../support/text";

// One agent call that hangs for 30 s inside a 40 s step: the step stays Dispatched while the test forges.
const it = e2eTest({
  STEP_TIMEOUT_SECONDS: "40",
  AGENT_ATTEMPT_TIMEOUT_SECONDS: "30",
  AGENT_MAX_ATTEMPTS: "1",
});

type Alert = { kind: string; orderId: string | null; reason: string };

/** The declared process's steps (src/domain/process.ts); the first test's order waits on the last. */
const STEPS = orderWorkflowV1.steps;
const LAST = STEPS.length - 1;

/** The attempt's orchestration while it waits: its timer set at step 0's completeBy, as the claim dispatched it. */
const WAITING = { runtimeStatus: "Running", customStatus: { stepIndex: 0, direction: "do" } };

/** An order whose step `hangingStep` was dispatched and is waiting for an answer that will not come in time. */
async function orderWaitingOn(e2e: E2E, prefix: string, hangingStep: number) {
  const order = e2eOrder(prefix);
  await e2e.faults.add({ ...faultOn(hangingStep), orderId: order.orderId, kind: "hang" });
  expect((await e2e.submit(order)).status).toBe(202);
  await e2e.waitForRecord(
    order.orderId,
    (r) => r.steps[hangingStep]?.status === "Dispatched",
    `step ${hangingStep} dispatched`,
  );
  // The orchestration races its timer, set at the first step's completeBy (it hears of no later dispatch), against
  // the attempt's end.
  await expect
    .poll(async () => await orchestration(e2e, order.orderId), { timeout: 10_000 })
    .toMatchObject(WAITING);
  return order.orderId;
}

async function orchestration(
  e2e: E2E,
  orderId: string,
): Promise<{ runtimeStatus: string; customStatus: unknown }> {
  const res = await e2e.api(`/api/orders/${orderId}/orchestration`);
  if (res.status === 404) return { runtimeStatus: "NotYetStarted", customStatus: null };
  return (await res.json()) as {
    runtimeStatus: string;
    customStatus: unknown;
  };
}

/** Sends each forged body, then checks it was set aside with one alert whose reason says `names`. */
async function expectRefused(
  { e2e, alerts }: Pick<E2EFixtures, "e2e" | "alerts">,
  forgeries: Array<{ id: string; body: unknown; names: string; orderId: string | null }>,
) {
  await Promise.all(forgeries.map((f) => sendToQueue(e2e, "agent-replies", f.body, f.id)));
  for (const forged of forgeries) {
    const rejected = await waitForRejected(e2e, "agent-replies", forged.id);
    expect(rejected.applicationProperties, forged.id).toMatchObject({
      rejectionReason: "refused",
      originalDeliveryCount: 1,
    });
    expect(String(rejected.applicationProperties.rejectionDescription), forged.id).toContain(forged.names);
    const alert = (await alerts.waitFor((m) => (m as Alert).reason.includes(forged.names))) as Alert;
    expect(alert, forged.id).toMatchObject({ kind: "InvalidMessage", orderId: forged.orderId });
    expect(alert.reason.startsWith("agent-replies: "), forged.id).toBe(true);
    expect(alert.reason.length, forged.id).toBeLessThanOrEqual(1024);
  }
  // One alert per forged message.
  const raised = (await alerts.all()) as Alert[];
  for (const forged of forgeries) {
    expect(
      raised.filter((a) => a.reason.includes(forged.names)),
      forged.id,
    ).toHaveLength(1);
  }
}

it("refuses forged replies for a waiting step: no termination, no state change, no effect", async ({
  e2e,
  alerts,
}) => {
  const orderId = await orderWaitingOn(e2e, "FORGE", LAST);
  const instanceId = `${orderId}:1`;
  const before = await orderSnapshot(e2e, orderId);
  expect(await orchestration(e2e, orderId)).toMatchObject(WAITING);
  const ok = {
    requestId: agentRequestId(instanceId, LAST, "do"),
    orderId,
    instanceId,
    stepIndex: LAST,
    kind: "do",
  };
  // A successful answer: what gets each forgery below refused is its ids, not its result.
  const booked = { ...ok, outcome: "ok", result: { forged: "FORGED-1" } };

  await expectRefused({ e2e, alerts }, [
    {
      // The id the durable client would have put into its URL as it is: /instances/<id>/raiseEvent/...
      id: "forged-terminate",
      body: { ...booked, instanceId: `${instanceId}/terminate?reason=x` },
      names: `instanceId: expected an attempt id <orderId>:<attempt>, got "${instanceId}/terminate?reason=x"`,
      orderId,
    },
    {
      id: "forged-other-order",
      body: { ...booked, requestId: "whatever", orderId: "SOMEONE-ELSE" },
      names: `instanceId: "${instanceId}" is an attempt of order "${orderId}", not of "SOMEONE-ELSE"`,
      orderId: "SOMEONE-ELSE",
    },
    {
      id: "forged-request-id",
      body: { ...booked, requestId: `${instanceId}:0:do` },
      names: `requestId: expected "${instanceId}:${LAST}:do" for step ${LAST} do of ${instanceId}, got "${instanceId}:0:do"`,
      orderId,
    },
    {
      id: "forged-undo",
      body: { ...booked, kind: "undo", requestId: agentRequestId(instanceId, LAST, "undo") },
      names: `step ${LAST} undo of ${instanceId}: no such request was dispatched`,
      orderId,
    },
    {
      id: "forged-attempt",
      body: {
        ...booked,
        instanceId: `${orderId}:2`,
        requestId: agentRequestId(`${orderId}:2`, LAST, "do"),
      },
      names: `step ${LAST} do of ${orderId}:2: attempt 2 was never started (the order is at attempt 1)`,
      orderId,
    },
    {
      id: "forged-binary",
      body: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x81]),
      names: "(root): binary body of 6 bytes, expected a JSON object",
      orderId: null,
    },
  ]);

  expect(await orchestration(e2e, orderId)).toMatchObject(WAITING);
  expect(await orderSnapshot(e2e, orderId)).toEqual(before);
  // Every step before the waiting one applied, and nothing else.
  expect(before.ledger.map((e) => e.operation)).toEqual(STEPS.slice(0, LAST).map((s) => s.doOperation));
}, 60_000);

it("refuses an answer for a step the attempt has not dispatched yet, so it cannot wait for that step", async ({
  e2e,
  alerts,
}) => {
  const orderId = await orderWaitingOn(e2e, "PREMATURE", 0);
  const instanceId = `${orderId}:1`;
  const before = await orderSnapshot(e2e, orderId);
  // Every field right but one: the Scheduler has not asked for these steps yet.
  const answer = (stepIndex: number) => ({
    requestId: agentRequestId(instanceId, stepIndex, "do"),
    orderId,
    instanceId,
    stepIndex,
    kind: "do",
    outcome: "ok",
    result: { forged: "FORGED" },
  });
  // An answer for each later step of the declared process (the scenario needs one at least).
  const later = STEPS.slice(1);
  expect(later.length, "steps after the first").toBeGreaterThan(0);
  await expectRefused(
    { e2e, alerts },
    later.map((step, i) => ({
      id: `premature-${step.name}`,
      body: answer(i + 1),
      names: `step ${i + 1} do of ${instanceId}: no such request was dispatched (${step.name} do last dispatched as none)`,
      orderId,
    })),
  );
  expect(await orchestration(e2e, orderId)).toMatchObject(WAITING);
  expect(await orderSnapshot(e2e, orderId)).toEqual(before);
}, 60_000);

it("describes a huge reply in a bounded alert instead of echoing it", async ({ e2e, alerts }) => {
  const keys = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`field${i}`, "x".repeat(30)]));
  await expectRefused({ e2e, alerts }, [
    {
      id: "forged-huge",
      body: keys,
      names: 'Unrecognized keys: "field0", "field1"',
      orderId: null,
    },
  ]);
  // About 200 KB of keys, of which the alert names the first few and counts the length.
  const alert = ((await alerts.all()) as Alert[]).find((a) => a.reason.includes("field0"))!;
  expect(alert.reason).not.toContain("field4999");
  expect(alert.reason).toMatch(/\.\.\. \(\d+ characters\)/);
}, 60_000);

it("keeps a forged field name on one line in the alert, the rejection and the log", async ({
  e2e,
  alerts,
}) => {
  const orderId = `LOGFORGE-${process.pid}`;
  const forged = "\u2028\u0085\r\n[alert] ALERT Error order=ORD-1 state=Error: payment failed";
  await expectRefused({ e2e, alerts }, [
    {
      id: "forged-key",
      body: {
        requestId: `${orderId}:1:0:do`,
        orderId,
        instanceId: `${orderId}:1`,
        stepIndex: 0,
        kind: "do",
        outcome: "ok",
        [`a${forged}`]: 1,
      },
      names:
        'Unrecognized key: "a\\u2028\\u0085\\r\\n[alert] ALERT Error order=ORD-1 state=Error: payment failed"',
      orderId,
    },
  ]);
  const alert = ((await alerts.all()) as Alert[]).find((a) => a.orderId === orderId)!;
  expect(alert.reason).not.toMatch(RAW_CONTROL);
  const lines = e2e.logs.filter(
    (r) => r.category === "user" && (r.message.includes(orderId) || r.message.includes("message forged-key")),
  );
  expect(lines.map((r) => r.message)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^ALERT InvalidMessage order=LOGFORGE-/),
      expect.stringMatching(/^agent-replies: message forged-key set aside on rejected-messages: refused: /),
    ]),
  );
  for (const line of lines) expect(line.message).not.toMatch(RAW_CONTROL);
}, 60_000);
