import { describe, expect, it } from "vitest";
import {
  WorkflowRegistry,
  agentRequestQueue,
  orderWorkflowV1,
  type WorkflowDefinition,
} from "../../../src/domain";

const orderWorkflowV2: WorkflowDefinition = {
  name: "order",
  version: 2,
  steps: [
    ...orderWorkflowV1.steps,
    { name: "notifyCustomer", agent: "shipping", doOperation: "notify", undoOperation: "retract" },
  ],
};

describe("workflow definitions", () => {
  it("defines order v1 as reserve → charge → book, each with its undo", () => {
    expect(orderWorkflowV1.steps.map((s) => [s.agent, s.doOperation, s.undoOperation])).toEqual([
      ["inventory", "reserve", "release"],
      ["payment", "charge", "refund"],
      ["shipping", "book", "cancel"],
    ]);
    expect(agentRequestQueue("payment")).toBe("payment-requests");
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
});
