import { afterEach, describe, expect, it } from "vitest";
import { parseCliArgs } from "../../src/cli";
import { HostClock, installDateShim, runInAppTime, TimeSkipper } from "../../src/timeSkipping";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe("HostClock", () => {
  it("runs at wall-clock speed from its start time", async () => {
    const clock = new HostClock(new Date("2030-01-01T00:00:00Z"));
    const first = clock.nowMs();
    expect(Math.abs(first - Date.parse("2030-01-01T00:00:00Z"))).toBeLessThan(50);
    await sleep(30);
    expect(clock.nowMs() - first).toBeGreaterThanOrEqual(25);
    expect(clock.now()).toBeInstanceOf(Date);
  });

  it("fires a short timer in real time, without any skip", async () => {
    const clock = new HostClock();
    const fired: number[] = [];
    const at = clock.nowMs() + 20;
    clock.setTimer(new Date(at), () => fired.push(clock.nowMs()));
    await sleep(5);
    expect(fired).toEqual([]);
    await sleep(60);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toBeGreaterThanOrEqual(at);
  });

  it("skipTo fires the timers now due, in time order, and leaves later ones pending", async () => {
    const clock = new HostClock(0);
    const fired: string[] = [];
    clock.setTimer(new Date(3 * DAY), () => fired.push("3d"));
    clock.setTimer(new Date(DAY), () => fired.push("1d"));
    clock.setTimer(new Date(2 * DAY), () => fired.push("2d"));
    clock.setTimer(new Date(7 * DAY), () => fired.push("7d"));
    expect(clock.nextTimerAt()).toBe(DAY);
    clock.skipTo(3 * DAY);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(3 * DAY);
    await sleep(10);
    expect(fired).toEqual(["1d", "2d", "3d"]);
    expect(clock.pendingTimerCount()).toBe(1);
    expect(clock.nextTimerAt()).toBe(7 * DAY);
  });

  it("never moves back, and cancelled timers never fire", async () => {
    const clock = new HostClock(10 * DAY);
    const fired: string[] = [];
    const handle = clock.setTimer(new Date(11 * DAY), () => fired.push("cancelled"));
    handle.cancel();
    clock.skipTo(DAY);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(10 * DAY);
    clock.skipTo(12 * DAY);
    await sleep(10);
    expect(fired).toEqual([]);
    expect(clock.pendingTimerCount()).toBe(0);
  });

  it("waits longer than setTimeout can (over 24.8 days) by chaining", async () => {
    const clock = new HostClock(0);
    let fired = false;
    clock.setTimer(new Date(40 * DAY), () => (fired = true));
    await sleep(5);
    expect(fired).toBe(false);
    clock.skipTo(40 * DAY);
    await sleep(5);
    expect(fired).toBe(true);
  });

  it("is busy while any probe says so", () => {
    const clock = new HostClock();
    let busy = true;
    const remove = clock.addBusyProbe(() => busy);
    clock.addBusyProbe(() => false);
    expect(clock.isBusy()).toBe(true);
    busy = false;
    expect(clock.isBusy()).toBe(false);
    busy = true;
    remove();
    expect(clock.isBusy()).toBe(false);
  });
});

describe("TimeSkipper", () => {
  it("jumps to the next timer only after the host has been idle for the settle period", () => {
    const clock = new HostClock(0);
    clock.setTimer(new Date(7 * DAY), () => undefined);
    const skipper = new TimeSkipper(clock, { settleMs: 20 });
    expect(skipper.check(1000)).toBe(false); // idleness starts
    expect(skipper.check(1010)).toBe(false); // not settled yet
    expect(clock.nowMs()).toBeLessThan(DAY);
    expect(skipper.check(1020)).toBe(true);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(7 * DAY);
    expect(skipper.skipCount).toBe(1);
  });

  it("does not jump while anything is busy, and busy work restarts the settle period", () => {
    const clock = new HostClock(0);
    clock.setTimer(new Date(HOUR), () => undefined);
    let busy = true;
    clock.addBusyProbe(() => busy);
    const skipper = new TimeSkipper(clock, { settleMs: 20 });
    for (let t = 0; t <= 100; t += 10) expect(skipper.check(t)).toBe(false);
    busy = false;
    expect(skipper.check(110)).toBe(false);
    busy = true;
    expect(skipper.check(125)).toBe(false);
    busy = false;
    expect(skipper.check(130)).toBe(false);
    expect(skipper.check(145)).toBe(false);
    expect(skipper.check(150)).toBe(true);
  });

  it("does not move without a timer ahead", () => {
    const clock = new HostClock(0);
    const skipper = new TimeSkipper(clock, { settleMs: 0 });
    expect(skipper.check(0)).toBe(false);
    expect(skipper.check(100)).toBe(false);
    expect(clock.nowMs()).toBeLessThan(HOUR);
  });

  it("plays a chain of timers (timer → work → next timer) in milliseconds of wall time", async () => {
    const clock = new HostClock(0);
    const seen: number[] = [];
    let working = 0;
    clock.addBusyProbe(() => working > 0);
    const step = (n: number): void => {
      clock.setTimer(new Date(clock.nowMs() + DAY), () => {
        working++;
        setTimeout(() => {
          seen.push(clock.nowMs());
          working--;
          if (n < 5) step(n + 1);
        }, 5);
      });
    };
    step(1);
    const skipper = new TimeSkipper(clock, { settleMs: 10, pollMs: 2 });
    skipper.start();
    const started = performance.now();
    try {
      while (seen.length < 5 && performance.now() - started < 5000) await sleep(5);
    } finally {
      skipper.stop();
    }
    expect(seen).toHaveLength(5);
    seen.forEach((at, i) => expect(at).toBeGreaterThanOrEqual((i + 1) * DAY));
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe("the Date shim", () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
  });

  it("gives invocations the clock's time, and everything else the wall clock", () => {
    const RealDate = Date;
    const clock = new HostClock(new RealDate("2030-06-01T00:00:00Z"));
    restore = installDateShim();
    const wall = Date.now();
    expect(Math.abs(new Date().getTime() - wall)).toBeLessThan(1000);
    runInAppTime(clock, () => {
      expect(Math.abs(Date.now() - Date.parse("2030-06-01T00:00:00Z"))).toBeLessThan(1000);
      expect(new Date().getUTCFullYear()).toBe(2030);
      expect(Date()).toContain("2030");
      // Everything with arguments, and the rest of Date, is the real Date.
      expect(new Date(0).toISOString()).toBe("1970-01-01T00:00:00.000Z");
      expect(new Date(2020, 0, 2).getFullYear()).toBe(2020);
      expect(Date.UTC(2020, 0, 1)).toBe(RealDate.UTC(2020, 0, 1));
      expect(new Date() instanceof RealDate).toBe(true);
      expect(new RealDate(1) instanceof Date).toBe(true);
    });
    clock.skipTo(clock.nowMs() + 7 * DAY);
    return runInAppTime(clock, async () => {
      await sleep(1);
      // The context follows the invocation's awaits and timers.
      expect(new Date().getUTCDate()).toBe(8);
    });
  });

  it("restores the real Date on the last restore", () => {
    const RealDate = Date;
    const first = installDateShim();
    const second = installDateShim();
    expect(Date).not.toBe(RealDate);
    first();
    first();
    expect(Date).not.toBe(RealDate);
    second();
    expect(Date).toBe(RealDate);
  });
});

describe("--time-skipping", () => {
  it("turns time-skipping on; real time is the default", () => {
    expect(parseCliArgs(["--time-skipping"]).timeSkipping).toBe(true);
    expect(parseCliArgs([]).timeSkipping).toBeUndefined();
  });
});
