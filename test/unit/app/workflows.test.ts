// The process-wide workflow registry: versions registered at start-up sit beside the built-in ones, and
// registration closes once the app has taken the registry.
import { beforeEach, expect, it, vi } from "vitest";
import { orderWorkflowV1, type WorkflowDefinition } from "../../../src/domain";

type Module = typeof import("../../../src/app/workflows");
let workflows: Module;
beforeEach(async () => {
  vi.resetModules();
  workflows = await import("../../../src/app/workflows");
});

const v2: WorkflowDefinition = { name: "order", version: 2, steps: [...orderWorkflowV1.steps].reverse() };

it("adds a version beside the built-in one; new orders start on the newest, records keep theirs", () => {
  workflows.registerWorkflow(v2);
  const registry = workflows.appWorkflows();
  expect(registry.latest("order")).toBe(v2);
  expect(registry.get({ name: "order", version: 1 })?.steps.map((s) => s.name)).toEqual(
    orderWorkflowV1.steps.map((s) => s.name),
  );
  expect(registry.get({ name: "order", version: 2 })).toBe(v2);
});

it("refuses a registration once the app has taken the registry", () => {
  workflows.appWorkflows();
  expect(() => workflows.registerWorkflow(v2)).toThrow(/must be registered at start-up/);
  expect(workflows.appWorkflows().get({ name: "order", version: 2 })).toBeUndefined();
});

it("refuses a version that is already registered", () => {
  expect(() => workflows.registerWorkflow({ ...v2, version: 1 })).toThrow(/order@1 is already registered/);
});

it("names what is wrong with a malformed definition", () => {
  const step = { ...orderWorkflowV1.steps[0]!, agent: "billing", doOperation: "Reserve!" };
  expect(() =>
    workflows.registerWorkflow({ name: "order", version: 3, steps: [step] } as unknown as WorkflowDefinition),
  ).toThrow(/steps\.0\.agent.*steps\.0\.doOperation: expected a remote operation name/s);
  expect(() => workflows.registerWorkflow({ name: "order", version: 0, steps: [] })).toThrow(
    /version.*steps/s,
  );
});

it("refuses a step calling an operation its service does not declare (src/domain/process.ts)", () => {
  const last = orderWorkflowV1.steps.at(-1)!;
  const step = { ...last, name: "notifyCustomer", doOperation: "undeclared" };
  expect(() => workflows.registerWorkflow({ name: "order", version: 3, steps: [step] })).toThrow(
    `step notifyCustomer calls ${last.agent}/undeclared, an operation SERVICES.${last.agent}.operations in src/domain/process.ts does not declare`,
  );
});

it("takes a step without undo, and refuses one that declares only part of an undo", () => {
  const { name, agent, doOperation, doRequest, undoOperation } = orderWorkflowV1.steps[0]!;
  const check = { name: "checkStock", agent, doOperation, doRequest };
  // A plain-JavaScript entry can leave out a part of the undo that TypeScript would have asked for.
  const partial = { ...check, name, undoOperation } as unknown as WorkflowDefinition["steps"][number];
  expect(() => workflows.registerWorkflow({ name: "order", version: 4, steps: [partial] })).toThrow(
    `step ${name} declares undoOperation but not compensationFrom, undoRequest: add compensationFrom and undoRequest for a step that is undone, or remove undoOperation for a step without undo`,
  );
  workflows.registerWorkflow({ name: "order", version: 3, steps: [check, ...orderWorkflowV1.steps] });
  expect(workflows.appWorkflows().get({ name: "order", version: 3 })?.steps[0]).toBe(check);
});
