import { describe, expect, it } from "vitest";
import { timingsRequest } from "../../../src/api/timings";
import { loadConfig } from "../../../src/config";
import { defaultWorkflows, timingBudget, type WorkflowDefinition } from "../../../src/domain";
import { orderWorkflowV1 } from "../../../src/domain/process";
import { WorkflowRegistry } from "../../../src/domain/workflow";
import { TEST_PAGING_KEY } from "../../support/domain";

const env = {
  ServiceBusConnection: "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v",
  CosmosConnection: "AccountEndpoint=https://localhost:8081/;AccountKey=a2V5;",
  PAGING_TOKEN_KEY: TEST_PAGING_KEY,
};

describe("GET /api/timings", () => {
  it("answers the timing settings the app runs with and the figures they imply", () => {
    const config = loadConfig({ ...env, STEP_TIMEOUT_SECONDS: "60" });
    const res = timingsRequest({ config, workflows: defaultWorkflows() });
    expect(res.status).toBe(200);
    const body = res.jsonBody as Record<string, unknown>;
    expect(body.settings).toEqual({
      STEP_TIMEOUT_SECONDS: 60,
      CLAIM_TIMEOUT_SECONDS: 60,
      SUPERVISOR_SCHEDULE: "*/15 * * * * *",
      SUPERVISOR_BACKOFF_SECONDS: 10,
      SUPERVISOR_MAX_FAILURES: 3,
      SUPERVISOR_PAGE_SIZE: 100,
      STARTER_SCHEDULE: "*/5 * * * * *",
    });
    expect(body.inputs).toMatchObject({
      supervisorIntervalSeconds: 15,
      starterIntervalSeconds: 5,
      steps: orderWorkflowV1.steps.length,
    });
    expect(body.figures).toEqual(timingBudget(body.inputs as Parameters<typeof timingBudget>[0]));
    expect(body.figures).toMatchObject({ recovery: { viaSweepSeconds: 90 } }); // 60 + 15 + 10 + 5
    expect(body.limits).toEqual({ maxBackoffSeconds: 3600, maxPagesPerSweep: 50 });
    expect(body.problem).toBeNull();
  });

  it("counts the steps of the longest registered workflow", () => {
    const longer: WorkflowDefinition = {
      ...orderWorkflowV1,
      version: 2,
      steps: [...orderWorkflowV1.steps, { ...orderWorkflowV1.steps[0]!, name: "reserveAgain" }],
    };
    const res = timingsRequest({
      config: loadConfig(env),
      workflows: new WorkflowRegistry([orderWorkflowV1, longer]),
    });
    expect((res.jsonBody as { inputs: { steps: number } }).inputs.steps).toBe(
      orderWorkflowV1.steps.length + 1,
    );
  });

  it("names a schedule whose period varies instead of inventing figures", () => {
    const config = loadConfig({ ...env, STARTER_SCHEDULE: "0 0 9 * * MON" });
    const body = timingsRequest({ config, workflows: defaultWorkflows() }).jsonBody as Record<
      string,
      unknown
    >;
    expect(body).toMatchObject({ inputs: null, figures: null });
    expect(body.problem).toMatch(
      /^STARTER_SCHEDULE: schedule "0 0 9 \* \* MON": cannot derive a fixed interval/,
    );
  });
});
