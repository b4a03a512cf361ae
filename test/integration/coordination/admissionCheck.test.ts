/**
 * What the check of an admission place says, against the Cosmos DB emulator. A round checks a place at its
 * attempt's deadline, which is when the Supervisor ends the attempt: the write that ends the lock may land just
 * before the round reads the record, its give-back a moment after. That is the normal path and no crash; only a place
 * whose give-back was due long ago is reported as lost ("a crash between two writes").
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import {
  ADMISSION,
  ADMISSION_SHARD_PREFIX,
  claim,
  expire,
  orderWorkflowV1,
  submit,
  type StateRecord,
} from "../../../src/domain";
import { AdmissionPlaces } from "../../../src/coordination/admissionShards";
import type { Logger } from "../../../src/telemetry/logger";
import { StateStore } from "../../../src/store/stateStore";
import { at, sampleOrder } from "../../support/domain";
import { startAppStack, type AppStack } from "../../support/appStack";

const CLAIM_TIMEOUT_SECONDS = 60;
const CRASH_WARNING = "(a crash between two writes)";

let stack: AppStack;
let containers: AppStack["containers"];
let n = 0;

beforeAll(async () => {
  stack = await startAppStack();
  containers = stack.containers;
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  const { resources } = await containers.leases.items
    .query<{ id: string }>({
      query: "SELECT c.id FROM c WHERE STARTSWITH(c.id, @prefix)",
      parameters: [{ name: "@prefix", value: ADMISSION_SHARD_PREFIX }],
    })
    .fetchAll();
  await Promise.all(resources.map((r) => containers.leases.item(r.id, r.id).delete()));
});

afterEach(() => {
  vi.useRealTimers();
});

/** A logger that keeps its lines by level. */
function recordingLog(): Logger & { info: string[]; warnings: string[] } {
  const info: string[] = [];
  const warnings: string[] = [];
  const keep =
    (into: string[]) =>
    (...args: unknown[]) =>
      void into.push(args.map(String).join(" "));
  return { info, warnings, log: keep(info), warn: keep(warnings), error: keep(warnings) };
}

/** Admission with MAX_IN_FLIGHT 1, its clock at `clock.seconds` past T0. */
function places(states: StateStore, clock: { seconds: number }): AdmissionPlaces {
  return new AdmissionPlaces(containers.leases, {
    maxInFlight: 1,
    claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS,
    states,
    now: () => at(clock.seconds),
  });
}

/**
 * An order whose attempt 1 took the only place at T0 and claimed the record, then ended at `endedAt` (its deadline,
 * past the place's check time) by a write whose give-back has not happened: a store without one.
 */
async function attemptEndedWithoutGiveBack(
  admission: AdmissionPlaces,
  endedAt: number,
): Promise<{ record: StateRecord; shard: number }> {
  const states = new StateStore(containers.state);
  const orderId = `ADM-CHECK-${++n}`;
  const { record } = await states.create(
    submit(sampleOrder({ orderId }), { now: at(0), workflow: orderWorkflowV1 }),
  );
  const [placed] = await admission.take(await admission.findRoom(1, recordingLog()), [record]);
  expect(placed).toBeDefined();
  const claimed = await states.applyIfUnchanged(record, (r) =>
    claim(r, { now: at(0), claimTimeoutSeconds: endedAt, admissionShard: placed!.shard }),
  );
  expect(claimed.kind).toBe("written");
  const ended = await states.apply(orderId, (r) =>
    expire(r, { now: at(endedAt), expectedLockedBy: `${orderId}:1`, maxFailures: 3, backoffSeconds: 1 }),
  );
  expect(ended.kind).toBe("written");
  return { record: (ended as { record: StateRecord }).record, shard: placed!.shard };
}

it("frees, without a crash warning, a place whose attempt ended a moment ago and whose give-back is on its way", async () => {
  const clock = { seconds: 0 };
  const states = new StateStore(containers.state);
  const admission = places(states, clock);
  const { record, shard } = await attemptEndedWithoutGiveBack(admission, 100);

  // A round one second after the end, past the place's check time, finds the attempt no longer holding the record.
  clock.seconds = 101;
  const log = recordingLog();
  await new Promise((resolve) => setTimeout(resolve, ADMISSION.trustMs + 50));
  const rooms = await admission.findRoom(1, log);
  expect(rooms.map((r) => r.free)).toEqual([1]);
  expect(log.warnings).toEqual([]);
  expect(log.info).toEqual([
    `admission: admission:${shard}: freed 1 place(s) whose attempt ended moments ago, before its give-back ` +
      `landed: ${record.orderId}:1`,
  ]);
  // The give-back lands then, and finds nothing left to give back.
  await admission.giveBack(shard, { ended: [`${record.orderId}:1`] });
  expect((await admission.read(shard)).entries).toEqual([]);
});

it("warns of a crash when the place of an attempt that ended long ago was never given back", async () => {
  const clock = { seconds: 0 };
  const states = new StateStore(containers.state);
  const admission = places(states, clock);
  const { record, shard } = await attemptEndedWithoutGiveBack(admission, 100);

  clock.seconds = 100 + ADMISSION.giveBackGraceMs / 1000 + 1;
  const log = recordingLog();
  await new Promise((resolve) => setTimeout(resolve, ADMISSION.trustMs + 50));
  expect((await admission.findRoom(1, log)).map((r) => r.free)).toEqual([1]);
  expect(log.warnings).toEqual([
    `admission: admission:${shard}: 1 place(s) whose attempt ended without giving it back ${CRASH_WARNING}: ` +
      `${record.orderId}:1`,
  ]);
});

it("warns of nothing when the give-back lands while the round checks the place", async () => {
  const clock = { seconds: 0 };
  const states = new StateStore(containers.state);
  const checker = places(states, clock);
  const { record, shard } = await attemptEndedWithoutGiveBack(checker, 100);

  // The checker's copy of the shard, read before the place was due, still shows the place when the round starts:
  // it trusts a copy for ADMISSION.trustMs, by performance.now(), which stands still here however slow the machine.
  clock.seconds = 50;
  vi.useFakeTimers({ toFake: ["performance"] });
  await checker.read(shard);
  // Another instance gives the place back (late, but it lands) ...
  await places(new StateStore(containers.state), clock).giveBack(shard, { ended: [`${record.orderId}:1`] });
  // ... while the checker, trusting its copy, checks the place and loses its write to that give-back.
  clock.seconds = 100 + ADMISSION.giveBackGraceMs / 1000 + 1;
  const log = recordingLog();
  expect((await checker.findRoom(1, log)).map((r) => r.free)).toEqual([1]);
  expect(log.warnings).toEqual([]);
});
