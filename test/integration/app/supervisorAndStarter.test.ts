/**
 * Supervisor sweeps and starter claims against the embedded Cosmos DB and Service Bus emulators.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERT_RESEND_AFTER_SECONDS, claim, expire, orderWorkflowV1, submit } from "../../../src/domain";
import { createDependencies, type Dependencies } from "../../../src/app/dependencies";
import { claimAndStart } from "../../../src/scheduler/starter";
import { sweep } from "../../../src/supervisor/sweep";
import { at, sampleOrder } from "../../support/domain";
import { drain, startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;

beforeAll(async () => {
  stack = await startAppStack({
    SUPERVISOR_MAX_FAILURES: "1",
    MAX_IN_FLIGHT: "3",
    CLAIM_TIMEOUT_SECONDS: "60",
  });
});
afterAll(() => stack?.stop());

async function seed(orderId: string, createdAt: Date, claimedAt?: Date) {
  const { states } = stack.deps;
  await states.create(
    submit(sampleOrder({ orderId, replyTo: "status-demo" }), { now: createdAt, workflow: orderWorkflowV1 }),
  );
  if (claimedAt) await states.apply(orderId, (r) => claim(r, { now: claimedAt, claimTimeoutSeconds: 60 }));
}

describe("Supervisor", () => {
  it("lets one of two concurrent supervisors act, sends expired attempts back, and alerts on exhaustion", async () => {
    const { deps } = stack;
    await seed("SUP-1", at(0), at(1));
    await seed("SUP-2", at(0), at(2));
    // SUP-2 already failed once: this expiry exhausts SUPERVISOR_MAX_FAILURES=1.
    const sup2 = (await deps.states.get("SUP-2"))!;
    await deps.states.replace({ ...sup2, failureCount: 1 });
    deps.now = () => at(1000);

    const [a, b] = await Promise.all([
      sweep(deps, stack.context("supA"), "supA"),
      sweep(deps, stack.context("supB"), "supB"),
    ]);
    const leader = a.leader ? a : b;
    expect([a.leader, b.leader].filter(Boolean)).toHaveLength(1);
    expect(leader).toMatchObject({ scanned: 2, acted: 2, skipped: 0, outcomes: { Pending: 1, Error: 1 } });

    expect(await deps.states.get("SUP-1")).toMatchObject({
      processState: "Pending",
      failureCount: 1,
      lockedBy: null,
    });
    expect(await deps.states.get("SUP-2")).toMatchObject({ processState: "Error", failureCount: 2 });
    const alerts = await drain(stack.bus, "alerts");
    expect(alerts).toEqual([
      expect.objectContaining({ kind: "Error", orderId: "SUP-2", processState: "Error" }),
    ]);
    const statuses = await drain(stack.bus, "status-demo");
    expect(statuses).toContainEqual(expect.objectContaining({ orderId: "SUP-2", status: "failed" }));

    // The lease is held: a second candidate stays passive until it expires.
    const again = await sweep(deps, stack.context("supB"), leader === a ? "supB" : "supA");
    expect(again.leader).toBe(false);
  });
});

describe("decided alerts", () => {
  it("sends an alert a crash left unsent, once, after ALERT_RESEND_AFTER_SECONDS; a re-send is one message", async () => {
    const { deps } = stack;
    // The Supervisor's write decided Error and its process died before the send: the alert is on the record only.
    await seed("ALERT-1", at(0), at(1));
    const claimed = (await deps.states.get("ALERT-1"))!;
    const decidedAt = at(3000);
    const outcome = await deps.states.apply("ALERT-1", (r) =>
      expire(r, { now: decidedAt, expectedLockedBy: claimed.lockedBy!, maxFailures: 0, backoffSeconds: 1 }),
    );
    expect(outcome).toMatchObject({
      kind: "written",
      record: { processState: "Error", alert: { kind: "Error", messageId: "ALERT-1:1:Error", sentAt: null } },
    });
    await drain(stack.bus, "alerts");
    const sweepAt = async (seconds: number, holder: string) => {
      deps.now = () => new Date(decidedAt.getTime() + seconds * 1000);
      return sweep(deps, stack.context(holder), holder);
    };

    // Within the grace the deciding writer may still send it: the sweep leaves it.
    expect(await sweepAt(ALERT_RESEND_AFTER_SECONDS - 1, "res-1")).toMatchObject({ alertsResent: 0 });
    expect(await drain(stack.bus, "alerts")).toEqual([]);

    // A send that got through just before the crash, then the sweep's: the queue keeps one of the two.
    await deps.notifications.alert(
      stack.context(),
      {
        kind: "Error",
        orderId: "ALERT-1",
        processState: "Error",
        reason: outcome.kind === "written" ? outcome.record.alert!.reason : "",
      },
      { messageId: "ALERT-1:1:Error", at: decidedAt.toISOString() },
    );
    expect(await sweepAt(ALERT_RESEND_AFTER_SECONDS + 1, "res-1")).toMatchObject({ alertsResent: 1 });
    const alerts = await drain(stack.bus, "alerts");
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: "Error",
        orderId: "ALERT-1",
        processState: "Error",
        at: decidedAt.toISOString(),
      }),
    ]);
    expect((await deps.states.get("ALERT-1"))?.alert).toMatchObject({ sentAt: expect.any(String) });
    expect((await deps.states.get("ALERT-1"))?.history.at(-1)).toMatchObject({
      event: "alertSent",
      by: "supervisor",
    });

    // Marked sent: later sweeps send nothing.
    expect(await sweepAt(ALERT_RESEND_AFTER_SECONDS + 30, "res-1")).toMatchObject({ alertsResent: 0 });
    expect(await drain(stack.bus, "alerts")).toEqual([]);
  });
});

describe("starter", () => {
  it("claims oldest first and never more than MAX_IN_FLIGHT, even with two instances claiming at once", async () => {
    const { deps } = stack;
    // A second instance: its own store cache and admission view, the same containers.
    const other = createDependencies(stack.config);
    deps.now = () => at(5000);
    other.now = () => at(5000);
    try {
      for (let i = 0; i < 6; i++) await seed(`ST-${i}`, at(2000 + i));
      const inFlightBefore = await deps.states.count(["Processing", "Compensating"]);
      const started: string[] = [];
      const start = async (instanceId: string) => {
        started.push(instanceId);
      };
      const reports = await Promise.all([
        claimAndStart(deps, stack.context("timer"), start),
        claimAndStart(other, stack.context("fast"), start),
      ]);
      const inFlight = await deps.states.count(["Processing", "Compensating"]);
      expect(inFlightBefore).toBe(0);
      expect(inFlight).toBe(3);
      expect(reports[0]!.claimed + reports[1]!.claimed).toBe(3);
      // Oldest first: SUP-1 (back to Pending after the sweep above, now due) and the two oldest new orders.
      expect(started.sort()).toEqual(["ST-0:1", "ST-1:1", "SUP-1:2"]);
      expect(await deps.states.get("ST-0")).toMatchObject({ processState: "Processing", lockedBy: "ST-0:1" });
      // Each claimed attempt holds one place, and the claims that lost their race gave theirs back.
      const holders = await placesHeld(deps);
      expect(holders.sort()).toEqual(["ST-0:1", "ST-1:1", "SUP-1:2"]);
    } finally {
      await other.close();
    }
  });
});

/** The holders of every admission place, across the shards. */
async function placesHeld(deps: Dependencies): Promise<string[]> {
  const shards = await Promise.all(
    Array.from({ length: deps.admission.shards }, (_, k) => deps.admission.read(k)),
  );
  return shards.flatMap((s) => s.entries.map((e) => e.holder));
}
