// What the sdkCost benchmark multiplies each call's CPU by: the calls an order of the end-to-end run made,
// read from its order profile.
import { describe, expect, it } from "vitest";
import type { StoreKindProfile } from "../../../bench/orderProfile";
import { callsPerOrder } from "../../../bench/sdkCost";
import { AGENT_NAMES, agentFunctionName, orderWorkflowV1 } from "../../../src/domain";
import { orderProfile, storeRow } from "../../support/orderProfiles";

const STEPS = orderWorkflowV1.steps;

const row = (kind: string, operation: StoreKindProfile["operation"], perOrder: number) =>
  storeRow({ kind, operation, perOrder });

const profile = orderProfile({
  store: [
    row("PUT doc state", "replace", 5),
    row("PUT doc leases", "replace", 1.5),
    row("POST docs orders", "create", 1),
    row("POST docs state", "create", 1),
    row("GET doc leases", "pointRead", 0.5),
    row("POST query state", "query", 0.25),
    row("POST plan state", "metadata", 0.25),
  ],
  functions: {
    // Each service's agent once per step that calls it (the declared process's), and one reply per step.
    executionsByFunctionPerOrder: {
      ...Object.fromEntries(
        AGENT_NAMES.map((agent) => [agentFunctionName(agent), STEPS.filter((s) => s.agent === agent).length]),
      ),
      agentReplies: STEPS.length,
    },
  },
});

describe("calls per order", () => {
  it("counts the store's requests by operation, query plans inside their query's call", () => {
    const calls = callsPerOrder(profile);
    expect(calls.storeReplace).toBe(6.5);
    expect(calls.storeCreate).toBe(2);
    expect(calls.storePointRead).toBe(0.5);
    expect(calls.storeQuery).toBe(0.25);
  });

  it("counts sends and deliveries, one remote call per agent execution, and the durable API both ways", () => {
    const calls = callsPerOrder(profile);
    expect(calls.busSend).toBe(13);
    expect(calls.busReceiveComplete).toBe(7);
    // The agents' executions, not the replies'.
    expect(calls.fetchCall).toBe(STEPS.length);
    // One start and three raised events; the devhost serves each, and the front door's POST.
    expect(calls.durableClientCall).toBe(4);
    expect(calls.httpServed).toBe(5);
  });
});
