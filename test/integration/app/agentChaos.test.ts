/**
 * Chaos in staging through the real agent: CHAOS_* settings, the app's dependencies, cockatiel's retries and
 * attempt timeout, the shared circuit breaker in the Cosmos DB emulator, the reply on the Service Bus emulator,
 * and the remote services simulator behind it all. Chaos draws from a seeded generator, so every run injects into
 * the same attempts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { orderWorkflowV1, type AgentName, type AgentRequest } from "../../../src/domain";
import { handleAgentRequest, handlingSummary } from "../../../src/agents/agent";
import type { Logger } from "../../../src/telemetry/logger";
import { seededRandom } from "../../../tools/seededRandom";
import { drain, startAppStack, type AppStack } from "../../support/appStack";
import { dispatchedStep } from "../../support/dispatch";
import { sampleOrder } from "../../support/domain";

/** One attempt's timeout, and the attempts per request: what chaos must get through. */
const STACK_SETTINGS = { AGENT_MAX_ATTEMPTS: "3", AGENT_ATTEMPT_TIMEOUT_SECONDS: "1" };
const SEED = 1;

let stack: AppStack;
let n = 0;

beforeAll(async () => {
  stack = await startAppStack(STACK_SETTINGS);
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  await fetch(`${stack.emulators.simulatorUrl}/_ledger`, { method: "DELETE" });
  await fetch(`${stack.emulators.simulatorUrl}/_faults`, { method: "DELETE" });
});

/** The do request of `service`'s step of the order workflow, as the Scheduler sends it, its record dispatched. */
function request(service: AgentName): Promise<AgentRequest> {
  const stepIndex = orderWorkflowV1.steps.findIndex((s) => s.agent === service);
  return dispatchedStep(stack.deps, sampleOrder({ orderId: `CH-${++n}` }), stepIndex);
}

/** A logger that keeps its lines, to read what an operator would see. */
function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  return { lines, log: keep, warn: keep, error: keep };
}

const chaosLines = (log: { lines: string[] }) => log.lines.filter((l) => l.includes("injected chaos"));

async function ledgerFor(key: string): Promise<Array<{ applied: boolean; requests: number }>> {
  const res = await fetch(`${stack.emulators.simulatorUrl}/_ledger`);
  const { entries } = (await res.json()) as {
    entries: Array<{ idempotencyKey: string; applied: boolean; requests: number }>;
  };
  return entries.filter((e) => e.idempotencyKey === key);
}

describe("chaos in the agent's pipeline", () => {
  it("with a fault rate of 1, fails every attempt as transient before calling: the agent retries and replies as in a real outage", async () => {
    const deps = stack.dependencies(
      { CHAOS_ENABLED: "true", CHAOS_FAULT_RATE: "1", CHAOS_SERVICES: "payment" },
      { random: seededRandom(SEED) },
    );
    const log = recordingLog();
    const req = await request("payment");
    const outcome = await handleAgentRequest(deps, log, "payment", req);
    expect(outcome).toMatchObject({
      kind: "replied",
      calls: 3,
      injected: 3,
      reply: { outcome: "transient", error: { code: "ChaosFault" } },
    });
    // The service received nothing; the breaker counted three failed calls of this order, as for an outage.
    expect(await ledgerFor(req.idempotencyKey)).toEqual([]);
    expect(await deps.breaker("payment").current()).toMatchObject({
      failures: 3,
      failingOrders: expect.arrayContaining([req.orderId]) as unknown,
    });
    const replies = await drain(stack.bus, "agent-replies");
    expect(replies).toEqual([expect.objectContaining({ requestId: req.requestId, outcome: "transient" })]);
    expect(chaosLines(log)).toEqual(
      [1, 2, 3].map(
        (attempt) =>
          `payment: injected chaos (fault, no call made) before attempt ${attempt} of charge for ${req.idempotencyKey}; ` +
          `this instance has injected 0 latency and ${attempt} fault(s) into payment calls`,
      ),
    );
    expect(handlingSummary("payment", outcome)).toBe(
      "payment: replied transient (3 calls, 3 hit by injected chaos)",
    );

    // A real outage of the same service, through the app without chaos: the same calls, the same kind of reply.
    await fetch(`${stack.emulators.simulatorUrl}/_faults`, {
      method: "POST",
      body: JSON.stringify({ service: "payment", kind: "transient" }),
    });
    const real = await handleAgentRequest(stack.deps, recordingLog(), "payment", await request("payment"));
    expect(real).toMatchObject({ kind: "replied", calls: 3, injected: 0, reply: { outcome: "transient" } });
    await drain(stack.bus, "agent-replies");
  });

  it("with a latency beyond the attempt timeout, times every attempt out before its call starts", async () => {
    // The last step's service: any would do, and the chaos settings name it.
    const last = orderWorkflowV1.steps.at(-1)!;
    const service = last.agent as AgentName;
    const deps = stack.dependencies(
      {
        CHAOS_ENABLED: "true",
        CHAOS_LATENCY_RATE: "1",
        CHAOS_LATENCY_SECONDS: "20",
        CHAOS_SERVICES: service,
      },
      { random: seededRandom(SEED) },
    );
    const log = recordingLog();
    const req = await request(service);
    const started = Date.now();
    const outcome = await handleAgentRequest(deps, log, service, req);
    expect(outcome).toMatchObject({
      kind: "replied",
      calls: 3,
      injected: 3,
      reply: { outcome: "transient", error: { code: "Timeout" } },
    });
    // Each wait ended with its attempt's 1 s timeout, not after 20 s: three attempts and two back-offs.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await ledgerFor(req.idempotencyKey)).toEqual([]);
    expect(chaosLines(log)).toHaveLength(3);
    expect(chaosLines(log)[0]).toMatch(
      new RegExp(`^${service}: injected chaos \\(latency 20 s\\) before attempt 1 of ${last.doOperation}`),
    );
    await drain(stack.bus, "agent-replies");
  });

  it("with a latency within the attempt timeout, makes the real call late", async () => {
    const deps = stack.dependencies(
      {
        CHAOS_ENABLED: "true",
        CHAOS_LATENCY_RATE: "1",
        CHAOS_LATENCY_SECONDS: "0.3",
        CHAOS_SERVICES: "inventory",
      },
      { random: seededRandom(SEED) },
    );
    const req = await request("inventory");
    const started = Date.now();
    const outcome = await handleAgentRequest(deps, recordingLog(), "inventory", req);
    expect(outcome).toMatchObject({ kind: "replied", calls: 1, injected: 1, reply: { outcome: "ok" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await ledgerFor(req.idempotencyKey)).toEqual([expect.objectContaining({ applied: true })]);
    await drain(stack.bus, "agent-replies");
  });

  it("injects into the attempts the seed picks: with a fault rate of 0.5 the agent's own retry recovers", async () => {
    // Each attempt draws twice, latency then fault: with this seed the first fault draw is below 0.5, the second not.
    const replica = seededRandom(SEED);
    const [, firstFault, , secondFault] = Array.from({ length: 4 }, () => replica());
    expect(firstFault).toBeLessThan(0.5);
    expect(secondFault).toBeGreaterThanOrEqual(0.5);

    const deps = stack.dependencies(
      { CHAOS_ENABLED: "true", CHAOS_FAULT_RATE: "0.5", CHAOS_SERVICES: "inventory" },
      { random: seededRandom(SEED) },
    );
    const log = recordingLog();
    const req = await request("inventory");
    const outcome = await handleAgentRequest(deps, log, "inventory", req);
    expect(outcome).toMatchObject({ kind: "replied", calls: 2, injected: 1, reply: { outcome: "ok" } });
    expect(chaosLines(log)).toEqual([expect.stringContaining("(fault, no call made) before attempt 1")]);
    expect(await ledgerFor(req.idempotencyKey)).toEqual([
      expect.objectContaining({ applied: true, requests: 1 }),
    ]);
    await drain(stack.bus, "agent-replies");
  });

  it("injects nothing while chaos is off, or into a service CHAOS_SERVICES does not name, whatever the random source draws", async () => {
    // A source that draws 0 would hit every attempt at any rate above 0.
    const off = stack.dependencies({}, { random: () => 0 });
    const paymentOnly = stack.dependencies(
      { CHAOS_ENABLED: "true", CHAOS_FAULT_RATE: "1", CHAOS_SERVICES: "payment" },
      { random: () => 0 },
    );
    for (const deps of [off, paymentOnly]) {
      const log = recordingLog();
      const service = deps === off ? "payment" : "inventory";
      const outcome = await handleAgentRequest(deps, log, service, await request(service));
      expect(outcome).toMatchObject({ kind: "replied", calls: 1, injected: 0, reply: { outcome: "ok" } });
      expect(chaosLines(log)).toEqual([]);
    }
    expect(off.config.chaos).toBeNull();
    await drain(stack.bus, "agent-replies");
  });
});
