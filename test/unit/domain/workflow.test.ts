import { describe, expect, it } from "vitest";
import {
  MAX_ORCHESTRATION_TURNS,
  ORDER_WORKFLOWS,
  defaultWorkflows,
  MAX_WORKFLOW_STEPS,
  WorkflowRegistry,
  orderWorkflowV1,
  withStepAfter,
  type WorkflowDefinition,
} from "../../../src/domain";

const orderWorkflowV2: WorkflowDefinition = {
  name: "order",
  version: 2,
  steps: [
    ...orderWorkflowV1.steps,
    {
      name: "notifyCustomer",
      agent: orderWorkflowV1.steps[0]!.agent,
      doOperation: "notify",
      undoOperation: "retract",
      doRequest: (order) => ({ orderId: order.orderId }),
      compensationFrom: () => null,
      undoRequest: (order) => ({ orderId: order.orderId }),
    },
  ],
};

describe("workflow definitions", () => {
  it("registers every version the declaration lists (ORDER_WORKFLOWS), the newest for new orders", () => {
    const registry = defaultWorkflows();
    expect(registry.list()).toEqual([...ORDER_WORKFLOWS]);
    expect(registry.latest("order")).toBe(ORDER_WORKFLOWS.at(-1));
  });

  it("runs v2 beside v1: new orders get the newest, records in flight keep theirs", () => {
    const registry = new WorkflowRegistry([orderWorkflowV1]);
    registry.register(orderWorkflowV2);
    expect(registry.latest("order").version).toBe(2);
    expect(registry.get({ name: "order", version: 1 })).toBe(orderWorkflowV1);
    expect(registry.get({ name: "order", version: 3 })).toBeUndefined();
  });

  it("refuses a version registered twice, an empty workflow and duplicate step names", () => {
    const registry = new WorkflowRegistry([orderWorkflowV1]);
    expect(() => registry.register(orderWorkflowV1)).toThrow(/order@1 is already registered/);
    expect(() => registry.register({ name: "x", version: 1, steps: [] })).toThrow(/no steps/);
    const step = orderWorkflowV1.steps[0]!;
    expect(() => registry.register({ name: "y", version: 1, steps: [step, step] })).toThrow(/duplicate step/);
    expect(() => registry.latest("unknown")).toThrow(/no workflow named unknown/);
  });

  it("refuses a workflow longer than one attempt's orchestration can run (two turns a step)", () => {
    const registry = new WorkflowRegistry([orderWorkflowV1]);
    const step = orderWorkflowV1.steps[0]!;
    const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ ...step, name: `step${i}` }));
    expect(MAX_WORKFLOW_STEPS * 2).toBe(MAX_ORCHESTRATION_TURNS);
    expect(() =>
      registry.register({ name: "long", version: 1, steps: steps(MAX_WORKFLOW_STEPS) }),
    ).not.toThrow();
    expect(() =>
      registry.register({ name: "long", version: 2, steps: steps(MAX_WORKFLOW_STEPS + 1) }),
    ).toThrow(
      `workflow long@2 has ${MAX_WORKFLOW_STEPS + 1} steps; an attempt can run at most ${MAX_WORKFLOW_STEPS}`,
    );
  });
});

describe("withStepAfter", () => {
  const extra = { ...orderWorkflowV1.steps[0]!, name: "reservePackaging" };

  it("builds a version from every step of the base, with the new step after the one named", () => {
    const names = withStepAfter(orderWorkflowV1, orderWorkflowV1.steps[1]!.name, extra).map((s) => s.name);
    const base = orderWorkflowV1.steps.map((s) => s.name);
    expect(names).toEqual([...base.slice(0, 2), "reservePackaging", ...base.slice(2)]);
  });

  it("refuses an anchor the base does not have, and a name it already has", () => {
    expect(() => withStepAfter(orderWorkflowV1, "noSuchStep", extra)).toThrow(
      /order v1 has no step noSuchStep \(steps: /,
    );
    const taken = { ...extra, name: orderWorkflowV1.steps[0]!.name };
    expect(() => withStepAfter(orderWorkflowV1, orderWorkflowV1.steps[1]!.name, taken)).toThrow(
      `order v1 already has a step ${taken.name}`,
    );
  });
});
