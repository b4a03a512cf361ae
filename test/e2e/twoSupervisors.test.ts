/**
 * Failure catalogue: two Supervisors at once. Two app instances share the emulators, each in its own process with
 * its own data directory and HTTP port, and both run the Supervisor: its sweep every second and its recovery
 * queue's consumer. Each expired attempt is decided once: the notice goes to one consumer, and only the holder of
 * the `supervisor` lease sweeps.
 */
import { expect } from "vitest";
import { AGENT_NAMES, agentFunctionName } from "../../src/domain";
import { e2eOrder } from "../support/e2eOrders";
import { processedLedger } from "../support/expectedProcess";
import { submitTo, type AppProcess, type ChildStack } from "../support/e2eChild";
import { childStackTest as it } from "../support/fixtures";

interface LeaseDocument {
  holder: string;
  expiresAt: string;
}

const leaseHolder = async (stack: ChildStack): Promise<string | undefined> =>
  (await stack.containers.leases.item("supervisor", "supervisor").read<LeaseDocument>()).resource?.holder;

/** What a process's Supervisor reported: its sweeps (as leader) and the records they acted on. */
function sweeps(app: AppProcess): { sweeps: number; acted: number } {
  const lines = [...app.output().matchAll(/supervisor sweep: scanned \d+, acted (\d+)/g)];
  return { sweeps: lines.length, acted: lines.reduce((sum, m) => sum + Number(m[1]), 0) };
}

/** The decisions a process's Supervisor took from its recovery queue, for one order. */
const noticeDecisions = (app: AppProcess, orderId: string): number =>
  [...app.output().matchAll(new RegExp(`supervisor: ${orderId}:\\d+ step \\d+ do passed`, "g"))].length;

it("decides each expired attempt once: one consumer per notice, only the lease holder sweeps; each effect once", async ({
  stack,
}) => {
  // Instance A runs the whole app. Instance B runs what needs no durable task hub: the Supervisor and every
  // declared service's agent. In Azure every instance of the app shares one task hub; on the devhost each process
  // owns its own, so a second full instance would start orchestrations the first cannot see and drop replies
  // meant for the first one's orchestrations.
  const a = await stack.startApp({ settings: { WEBSITE_INSTANCE_ID: "instance-A" } });
  const holderA = `instance-A:${a.pid}`;
  await expect
    .poll(() => leaseHolder(stack), {
      timeout: 20_000,
      interval: 100,
      message: "A holds the supervisor lease",
    })
    .toBe(holderA);
  const b = await stack.startApp({
    functions: ["supervisor", "supervisorDeadline", ...AGENT_NAMES.map(agentFunctionName)],
    settings: { WEBSITE_INSTANCE_ID: "instance-B" },
  });
  expect(b.output()).toMatch(/supervisor: timerTrigger/);
  expect(b.output()).not.toMatch(/starter: timerTrigger/);
  await expect
    .poll(() => b.output(), { timeout: 20_000, interval: 100, message: "B's Supervisor runs and defers" })
    .toContain(`supervisor: not the leader (lease held by ${holderA}`);

  // The charge hangs: attempts 1 and 2 pass their deadline, and both Supervisors see each expired record.
  const order = e2eOrder("TWO-SUP");
  await stack.faults.add({ service: "payment", operation: "charge", orderId: order.orderId, kind: "hang" });
  expect((await submitTo(a, order)).status).toBe(202);
  await stack.waitForRecord(
    order.orderId,
    (r) => r.failureCount === 2 && r.processState === "Pending",
    "the second expiry",
  );
  await stack.faults.clear();

  const record = await stack.waitForState(order.orderId, ["Processed"]);
  expect(record).toMatchObject({ attempt: 3, failureCount: 2, lockedBy: null });
  // One "expired" entry per expired attempt: nobody expired an attempt twice.
  const expired = record.history.filter((h) => h.event === "expired");
  expect(expired.map((h) => [h.attempt, h.by])).toEqual([
    [1, "supervisor"],
    [2, "supervisor"],
  ]);

  // Each expiry was decided once: from the recovery queue by one of the two consumers, or (should the leader's
  // sweep have come between the deadline and the notice) by A's sweep. The lease names one holder, A; B deferred
  // to it on every tick and never swept.
  const fromNotices = noticeDecisions(a, order.orderId) + noticeDecisions(b, order.orderId);
  expect(fromNotices).toBeGreaterThanOrEqual(1);
  expect(fromNotices + sweeps(a).acted).toBe(expired.length);
  expect(await leaseHolder(stack)).toBe(holderA);
  const notLeader = b
    .output()
    .split("\n")
    .filter((l) => l.includes("supervisor: not the leader"));
  expect(notLeader.length).toBeGreaterThan(3);
  expect(notLeader.every((l) => l.includes(`lease held by ${holderA}`))).toBe(true);
  expect(sweeps(b)).toEqual({ sweeps: 0, acted: 0 });
  expect(sweeps(a).sweeps).toBeGreaterThan(3);

  const ledger = await stack.ledger(order.orderId);
  expect(ledger.map((e) => `${e.service}.${e.operation}`)).toEqual(
    processedLedger(order.orderId).map((call) => call.label),
  );
  expect(ledger.every((e) => e.applied && e.requests === 1)).toBe(true);
  expect(await stack.drain("alerts")).toEqual([]);
}, 90_000);
