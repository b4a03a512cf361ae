import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { abortAfter } from "../../../src/resilience/abortAfter";

describe("abortAfter", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("aborts with the timeout's reason when the time is up, and says the cut was its own", () => {
    const outer = new AbortController();
    const cut = abortAfter(outer.signal, 500, () => new DOMException("late", "TimeoutError"));
    vi.advanceTimersByTime(499);
    expect(cut.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(cut.signal.aborted).toBe(true);
    expect((cut.signal.reason as DOMException).name).toBe("TimeoutError");
    expect(cut.timedOut()).toBe(true);
    cut.done();
  });

  it("aborts with the caller's reason when the caller aborts first, and says the cut was not its own", () => {
    const outer = new AbortController();
    const cut = abortAfter(outer.signal, 500);
    const reason = new Error("the caller gave up");
    outer.abort(reason);
    expect(cut.signal.aborted).toBe(true);
    expect(cut.signal.reason).toBe(reason);
    vi.advanceTimersByTime(1_000);
    expect(cut.timedOut()).toBe(false);
    cut.done();
  });

  it("starts aborted when the caller's signal already is", () => {
    const outer = new AbortController();
    outer.abort("gone");
    const cut = abortAfter(outer.signal, 500);
    expect(cut.signal.aborted).toBe(true);
    expect(cut.signal.reason).toBe("gone");
    cut.done();
  });

  it("lets go of the timer and the caller once done", () => {
    const outer = new AbortController();
    const cut = abortAfter(outer.signal, 500);
    cut.done();
    expect(vi.getTimerCount()).toBe(0);
    outer.abort();
    vi.advanceTimersByTime(1_000);
    expect(cut.signal.aborted).toBe(false);
    expect(cut.timedOut()).toBe(false);
  });

  it("works without a caller's signal", () => {
    const cut = abortAfter(undefined, 10);
    vi.advanceTimersByTime(10);
    expect(cut.signal.aborted).toBe(true);
    expect(cut.timedOut()).toBe(true);
    cut.done();
  });
});
