/**
 * The chaos strategy on its own: what it draws, that an injected wait ends with its attempt's signal, and what it
 * reports. Through the agent, the retries, the breaker and the simulator: test/integration/app/agentChaos.test.ts.
 */
import { describe, expect, it } from "vitest";
import { drawChaos, type ChaosSettings } from "../../../src/domain";
import { ChaosInjector, InjectedFaultError, type ChaosAttempt } from "../../../src/remote/chaosInjector";
import { seededRandom } from "../../../tools/seededRandom";

const settings = (overrides: Partial<ChaosSettings> = {}): ChaosSettings => ({
  services: ["payment"],
  latencyRate: 0,
  latencyMs: 20_000,
  faultRate: 0,
  ...overrides,
});

function attempt(signal: AbortSignal = new AbortController().signal): ChaosAttempt & { lines: string[] } {
  const lines: string[] = [];
  const keep = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  return {
    operation: "charge",
    idempotencyKey: "ORD-1:chargePayment:do",
    attempt: 2,
    signal,
    log: { log: keep, warn: keep, error: keep },
    lines,
  };
}

describe("drawChaos", () => {
  it("draws latency then fault for every attempt, so one seed gives one sequence whatever is switched on", () => {
    const draws = Array.from({ length: 4 }, seededRandom(7));
    const random = seededRandom(7);
    const s = settings({ latencyRate: 0.5, faultRate: 0.5 });
    expect([drawChaos(s, random), drawChaos(s, random)]).toEqual([
      { latencyMs: draws[0]! < 0.5 ? 20_000 : null, fault: draws[1]! < 0.5 },
      { latencyMs: draws[2]! < 0.5 ? 20_000 : null, fault: draws[3]! < 0.5 },
    ]);
  });

  it("never injects at rate 0 and always at rate 1", () => {
    expect(drawChaos(settings(), () => 0)).toEqual({ latencyMs: null, fault: false });
    expect(drawChaos(settings({ latencyRate: 1, faultRate: 1 }), () => 0.999999)).toEqual({
      latencyMs: 20_000,
      fault: true,
    });
  });
});

describe("ChaosInjector", () => {
  it("leaves an attempt alone when nothing is drawn", () => {
    expect(new ChaosInjector("payment", settings({ faultRate: 0.5 }), () => 0.5).next()).toBeNull();
  });

  it("ends an injected wait when the attempt's signal aborts, as a slow call would end", async () => {
    const chaos = new ChaosInjector("payment", settings({ latencyRate: 1 }), () => 0);
    const a = attempt(AbortSignal.timeout(50));
    const started = Date.now();
    await expect(chaos.inject(chaos.next()!, a)).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(a.lines).toEqual([
      "payment: injected chaos (latency 20 s) before attempt 2 of charge for ORD-1:chargePayment:do; " +
        "this instance has injected 1 latency and 0 fault(s) into payment calls",
    ]);
  });

  it("throws a fault instead of the call, and counts what this instance injected", async () => {
    const chaos = new ChaosInjector("payment", settings({ faultRate: 1 }), () => 0);
    const a = attempt();
    for (let i = 0; i < 2; i++) {
      await expect(chaos.inject(chaos.next()!, a)).rejects.toBeInstanceOf(InjectedFaultError);
    }
    expect(a.lines[1]).toMatch(
      /^payment: injected chaos \(fault, no call made\) .*injected 0 latency and 2 fault/,
    );
  });
});
