/**
 * Admission by places against the Cosmos DB emulator, as several instances run it: random schedules of claim rounds
 * on instances whose clocks disagree (one may see the others' fresh places as due for a check, as an instance does
 * after a long pause), claimers that take places and stop before their claim (a crash) and some that resume later
 * with the claim they had prepared, attempts that end with their give-back and without it (a crash between the two
 * writes). After every step, whatever ran at once: each locked record has a place naming its attempt, so never more
 * than MAX_IN_FLIGHT are locked; and once the clocks pass every check, a round fills every free place again.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Dependencies } from "../../../src/app/dependencies";
import {
  ADMISSION,
  ADMISSION_SHARD_PREFIX,
  claim,
  expire,
  orderWorkflowV1,
  submit,
  type StateRecord,
} from "../../../src/domain";
import { claimAndStart } from "../../../src/scheduler/starter";
import { AdmissionPlaces, type Placed } from "../../../src/coordination/admissionShards";
import { StateStore } from "../../../src/store/stateStore";
import { at, sampleOrder } from "../../support/domain";
import { startAppStack, type AppStack } from "../../support/appStack";

const RUNS = Number(process.env.ADMISSION_PROPERTY_RUNS ?? 12);
const CLAIM_TIMEOUT_SECONDS = 60;

let stack: AppStack;
let containers: AppStack["containers"];
let run = 0;

beforeAll(async () => {
  stack = await startAppStack({ CLAIM_TIMEOUT_SECONDS: String(CLAIM_TIMEOUT_SECONDS) });
  containers = stack.containers;
});
afterAll(() => stack?.stop());

/** One app instance: its own record cache and admission view, its own clock (seconds past the shared one). */
interface Instance {
  states: StateStore;
  admission: AdmissionPlaces;
  skewSeconds: number;
}

type Step =
  | { kind: "rounds"; instances: number[] }
  | { kind: "takeAndStop"; instance: number; pick: number }
  | { kind: "resume"; paused: number }
  | { kind: "end"; pick: number; giveBack: boolean }
  | { kind: "tick"; seconds: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("rounds" as const),
      instances: fc.array(fc.nat(2), { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("takeAndStop" as const),
      instance: fc.nat(2),
      pick: fc.nat(50),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resume" as const), paused: fc.nat(5) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("end" as const), pick: fc.nat(50), giveBack: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("tick" as const), seconds: fc.integer({ min: 1, max: 90 }) }),
  },
);

it("fences a claim that paused past its check: its place was found free, so the claim cannot land", async () => {
  await deleteShards();
  const ids = ["ADM-PAUSE-0", "ADM-PAUSE-1"];
  try {
    for (const [i, orderId] of ids.entries())
      await stack.deps.states.create(
        submit(sampleOrder({ orderId, replyTo: "status-demo" }), { now: at(i), workflow: orderWorkflowV1 }),
      );
    const placesOf = (states: StateStore, now: Date) =>
      new AdmissionPlaces(containers.leases, {
        maxInFlight: 1,
        claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS,
        states,
        now: () => now,
      });
    // Instance A takes the only place for the newer order, then pauses before its claim.
    const storeA = new StateStore(containers.state);
    const a = placesOf(storeA, at(5_000));
    const newer = (await storeA.get("ADM-PAUSE-1"))!;
    const [paused] = await a.take(await a.findRoom(1, stack.context("A")), [newer]);
    expect(paused).toBeDefined();

    // Instance B, past the entry's check time, finds the record unclaimed and the place free: it fences the record,
    // then spends the place on the older order.
    const storeB = new StateStore(containers.state);
    const b = placesOf(storeB, at(5_000 + CLAIM_TIMEOUT_SECONDS + 1));
    const deps = {
      ...stack.deps,
      config: { ...stack.config, maxInFlight: 1, claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS },
      states: storeB,
      admission: b,
      breaker: stack.deps.breaker,
      now: () => at(5_000 + CLAIM_TIMEOUT_SECONDS + 1),
    } as unknown as Dependencies;
    expect(await claimAndStart(deps, stack.context("B"), async () => {})).toMatchObject({ claimed: 1 });

    // A resumes: its claim is conditional on the version it read, which the fence replaced.
    const late = await storeA.applyIfUnchanged(paused!.record, (r) =>
      claim(r, { now: at(5_001), claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS, admissionShard: paused!.shard }),
    );
    expect(late.kind).toBe("conflict");
    await expectStrict(ids, 1);
    expect((await recordsOf(ids)).map((r) => r.lockedBy)).toEqual(["ADM-PAUSE-0:1", null]);
  } finally {
    await Promise.all(ids.map((id) => containers.state.item(id, id).delete()));
  }
});

it("never locks more than MAX_IN_FLIGHT records, across instances, pauses and crashes; lost places come back", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 3, max: 40 }),
      fc.array(stepArb, { minLength: 5, maxLength: 25 }),
      async (maxInFlight, orders, steps) => {
        const prefix = `ADM-${++run}`;
        await deleteShards();
        let clock = 5_000;
        const nowOf = (i: Instance) => at(clock + i.skewSeconds);
        const instances: Instance[] = [0, 0, CLAIM_TIMEOUT_SECONDS + 1].map((skewSeconds) => {
          const instance = { skewSeconds } as Instance;
          instance.states = new StateStore(containers.state, async (before) => {
            if (before.admissionShard !== null)
              await instance.admission.giveBack(before.admissionShard, { ended: [before.lockedBy!] });
          });
          instance.admission = new AdmissionPlaces(containers.leases, {
            maxInFlight,
            claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS,
            states: instance.states,
            now: () => nowOf(instance),
          });
          return instance;
        });
        // An instance whose write ends an attempt but which dies before its give-back.
        const withoutGiveBack = new StateStore(containers.state);
        const ids = Array.from({ length: orders }, (_, i) => `${prefix}-${i}`);
        for (const [i, orderId] of ids.entries())
          await instances[0]!.states.create(
            submit(sampleOrder({ orderId, replyTo: "status-demo" }), {
              now: at(i),
              workflow: orderWorkflowV1,
            }),
          );
        try {
          const paused: Placed[] = [];
          const depsOf = (i: Instance) =>
            ({
              ...stack.deps,
              config: { ...stack.config, maxInFlight, claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS },
              states: i.states,
              admission: i.admission,
              breaker: stack.deps.breaker,
              now: () => nowOf(i),
            }) as unknown as Dependencies;

          for (const step of steps) {
            if (step.kind === "rounds") {
              await Promise.all(
                step.instances.map((k) =>
                  claimAndStart(depsOf(instances[k]!), stack.context("round"), async () => {}),
                ),
              );
            } else if (step.kind === "takeAndStop") {
              const instance = instances[step.instance]!;
              // Any due record, not only the oldest: the claimer read it a while ago, or read a later page.
              const due = (await instance.states.findClaimable(nowOf(instance), 50)).items;
              const chosen = due.slice(step.pick % Math.max(1, due.length)).slice(0, 1);
              const rooms = await instance.admission.findRoom(1, stack.context("crash"));
              paused.push(...(await instance.admission.take(rooms, chosen)));
            } else if (step.kind === "resume") {
              const resumed = paused.splice(step.paused % Math.max(1, paused.length), 1)[0];
              if (resumed)
                await instances[0]!.states.applyIfUnchanged(resumed.record, (r) =>
                  claim(r, {
                    now: at(clock),
                    claimTimeoutSeconds: CLAIM_TIMEOUT_SECONDS,
                    admissionShard: resumed.shard,
                  }),
                );
            } else if (step.kind === "end") {
              const locked = (await recordsOf(ids)).filter((r) => r.lockedBy !== null);
              const ending = locked[step.pick % Math.max(1, locked.length)];
              if (ending) {
                const store = step.giveBack ? instances[0]!.states : withoutGiveBack;
                await store.apply(ending.orderId, (r) =>
                  expire(r, {
                    now: at(clock + 10 * CLAIM_TIMEOUT_SECONDS),
                    expectedLockedBy: ending.lockedBy!,
                    maxFailures: 1_000,
                    backoffSeconds: 0,
                  }),
                );
              }
            } else {
              clock += step.seconds;
            }
            await expectStrict(ids, maxInFlight);
          }

          // Liveness: once every check is due, the places that crashes left behind are found free again.
          clock += 10 * CLAIM_TIMEOUT_SECONDS;
          paused.length = 0;
          for (const r of await recordsOf(ids))
            if (r.lockedBy !== null)
              await instances[0]!.states.apply(r.orderId, (current) =>
                expire(current, {
                  now: at(clock),
                  expectedLockedBy: r.lockedBy!,
                  maxFailures: 1_000,
                  backoffSeconds: 0,
                }),
              );
          clock += 1;
          // An instance trusts its own copy of a shard for ADMISSION.trustMs when looking for room, and a stale copy
          // may show too little (the give-backs above went through instance 0): later rounds read afresh, as the
          // starter's timer does.
          await new Promise((resolve) => setTimeout(resolve, ADMISSION.trustMs + 50));
          for (let round = 0; round < 3; round++)
            await claimAndStart(depsOf(instances[round % 2]!), stack.context("refill"), async () => {});
          await expectStrict(ids, maxInFlight);
          const lockedAtEnd = (await recordsOf(ids)).filter((r) => r.lockedBy !== null).length;
          expect(lockedAtEnd, "every place is usable again").toBe(Math.min(maxInFlight, orders));
        } finally {
          // The next run's rounds must find only its own records, even after a failure (fast-check shrinks).
          await Promise.all(ids.map((id) => containers.state.item(id, id).delete()));
        }
      },
    ),
    {
      numRuns: RUNS,
      ...(process.env.ADMISSION_SEED
        ? { seed: Number(process.env.ADMISSION_SEED), path: process.env.ADMISSION_PATH, endOnFailure: true }
        : {}),
    },
  );
}, 240_000);

async function recordsOf(ids: readonly string[]): Promise<StateRecord[]> {
  const records = await Promise.all(ids.map((id) => stack.deps.states.get(id)));
  return records.filter((r): r is StateRecord => r !== undefined);
}

async function placeHolders(): Promise<string[]> {
  const { resources } = await containers.leases.items
    .query<{ entries: Array<{ holder: string }> }>({
      query: "SELECT * FROM c WHERE STARTSWITH(c.id, @prefix)",
      parameters: [{ name: "@prefix", value: ADMISSION_SHARD_PREFIX }],
    })
    .fetchAll();
  return resources.flatMap((shard) => shard.entries.map((e) => e.holder));
}

async function expectStrict(ids: readonly string[], maxInFlight: number): Promise<void> {
  const locked = (await recordsOf(ids)).filter((r) => r.lockedBy !== null);
  const holders = new Set(await placeHolders());
  const withoutPlace = locked.filter((r) => !holders.has(r.lockedBy!)).map((r) => r.lockedBy);
  expect(withoutPlace, "locked records without an admission place").toEqual([]);
  expect(locked.length).toBeLessThanOrEqual(maxInFlight);
}

async function deleteShards(): Promise<void> {
  const { resources } = await containers.leases.items
    .query<{ id: string }>({
      query: "SELECT c.id FROM c WHERE STARTSWITH(c.id, @prefix)",
      parameters: [{ name: "@prefix", value: ADMISSION_SHARD_PREFIX }],
    })
    .fetchAll();
  await Promise.all(resources.map((r) => containers.leases.item(r.id, r.id).delete()));
}
