/** Asks for a claim round while one runs make the running invocation do one more, and return at once. */
import { describe, expect, it } from "vitest";
import { MAX_ROUNDS_PER_RUNNER, RoundCoalescer } from "../../../src/scheduler/roundCoalescer";

/** A round that counts its runs and finishes when the test says so. */
function rounds() {
  let started = 0;
  const finish: Array<() => void> = [];
  const round = () =>
    new Promise<number>((resolve) => {
      const n = ++started;
      finish.push(() => resolve(n));
    });
  return { started: () => started, finish, round };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("RoundCoalescer", () => {
  it("runs one round at a time; asks meanwhile return at once and get one more round, run by the first", async () => {
    const c = new RoundCoalescer<number>();
    const r = rounds();
    const runner = c.run(r.round);
    expect(await Promise.all([c.run(r.round), c.run(r.round), c.run(r.round)])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(r.started()).toBe(1);
    r.finish[0]!();
    await tick();
    expect(r.started()).toBe(2);
    r.finish[1]!();
    expect(await runner).toBe(2);
    // Idle again: the next ask runs its own round.
    const later = c.run(r.round);
    await tick();
    expect(r.started()).toBe(3);
    r.finish[2]!();
    expect(await later).toBe(3);
  });

  it(`stops after ${MAX_ROUNDS_PER_RUNNER} rounds in one invocation, leaving the rest to the next ask`, async () => {
    const c = new RoundCoalescer<number>();
    let n = 0;
    const busy = async () => {
      n++;
      void c.run(async () => 0); // someone asks during every round
      return n;
    };
    expect(await c.run(busy)).toBe(MAX_ROUNDS_PER_RUNNER);
    expect(await c.run(async () => -1)).toBe(-1);
  });

  it("lets the next ask run after a round fails", async () => {
    const c = new RoundCoalescer<string>();
    await expect(c.run(() => Promise.reject(new Error("lease store down")))).rejects.toThrow(
      "lease store down",
    );
    expect(await c.run(async () => "ran")).toBe("ran");
  });
});
