import { describe, expect, it } from "vitest";
import { computeRetryBudget } from "../../../src/domain";

describe("retry budget", () => {
  it("multiplies the layers' limits: agent attempts × deliveries × Scheduler attempts", () => {
    const budget = computeRetryBudget({
      agentMaxAttempts: 3,
      agentRequestMaxDeliveryCount: 2,
      supervisorMaxFailures: 3,
      retryBudgetPerStep: 30,
    });
    expect(budget).toMatchObject({ attemptsPerStep: 4, maxCallsPerStep: 24, withinBudget: true });
    expect(budget.explanation).toContain("= 24 calls per step, within RETRY_BUDGET_PER_STEP=30");
  });

  it("refuses a configuration whose worst case exceeds the budget, and says which layers multiply", () => {
    const budget = computeRetryBudget({
      agentMaxAttempts: 5,
      agentRequestMaxDeliveryCount: 10,
      supervisorMaxFailures: 3,
      retryBudgetPerStep: 30,
    });
    expect(budget.withinBudget).toBe(false);
    expect(budget.maxCallsPerStep).toBe(200);
    expect(budget.explanation).toMatch(
      /AGENT_MAX_ATTEMPTS.*AGENT_REQUEST_MAX_DELIVERY_COUNT.*SUPERVISOR_MAX_FAILURES.*over/,
    );
  });
});
