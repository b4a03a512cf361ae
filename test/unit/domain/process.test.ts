/**
 * The process declaration (src/domain/process.ts) and the rules it is held to at load: names the queues, settings
 * and functions can carry, and both directions between the services and the steps.
 */
import { describe, expect, it } from "vitest";
import {
  AGENT_NAMES,
  SERVICES,
  agentFunctionName,
  agentNameSchema,
  agentRequestQueue,
  checkProcess,
  orderWorkflowV1,
  serviceUrlSetting,
  type ServiceDeclaration,
} from "../../../src/domain";

const steps = orderWorkflowV1.steps;
const services: Record<string, ServiceDeclaration> = SERVICES;

describe("the process declaration", () => {
  it("declares the sample's three services, in the order of the steps, and derives the agent names from them", () => {
    expect(AGENT_NAMES).toEqual(["inventory", "payment", "shipping"]);
    expect(steps.map((s) => s.agent)).toEqual(AGENT_NAMES);
    expect(agentNameSchema.options).toEqual(AGENT_NAMES);
    expect(checkProcess(SERVICES, steps)).toEqual([]);
  });

  it("names each service's queue, URL setting and agent function by one rule", () => {
    expect([
      agentRequestQueue("payment"),
      serviceUrlSetting("payment"),
      agentFunctionName("payment"),
    ]).toEqual(["payment-requests", "PAYMENT_URL", "paymentAgent"]);
  });

  it("refuses a step calling an undeclared service or operation, naming the step and where to declare it", () => {
    const { shipping: _dropped, ...withoutShipping } = services;
    expect(checkProcess(withoutShipping, steps)).toEqual([
      'src/domain/process.ts: step bookShipping calls service "shipping", which SERVICES in src/domain/process.ts does not declare (declared: inventory, payment)',
    ]);
    const renamed = steps.map((s) => (s.name === "bookShipping" ? { ...s, undoOperation: "void" } : s));
    expect(checkProcess(services, renamed)).toEqual([
      "src/domain/process.ts: operation shipping/cancel is declared but no step calls it",
      "src/domain/process.ts: step bookShipping calls shipping/void, an operation SERVICES.shipping.operations in src/domain/process.ts does not declare (declared: book, cancel)",
    ]);
  });

  it("refuses a service no step calls, and names the queues, settings and functions cannot carry", () => {
    const warehouse = { summary: "Notifies the warehouse.", operations: ["notify", "cancelNotice"] };
    expect(checkProcess({ ...services, warehouse }, steps)).toEqual([
      "src/domain/process.ts: service warehouse is declared but no step of orderWorkflowV1 calls it",
    ]);
    const notify = {
      ...steps[2]!,
      name: "notifyWarehouse",
      doOperation: "notify",
      undoOperation: "cancelNotice",
    };
    expect(
      checkProcess({ ...services, Ware_house: warehouse }, [...steps, { ...notify, agent: "Ware_house" }]),
    ).toEqual([
      'src/domain/process.ts: service "Ware_house" must be lowercase letters only (it names Ware_house-requests, WARE_HOUSE_URL, Ware_houseAgent)',
    ]);
    expect(checkProcess({ ...services, warehouse }, [...steps, { ...notify, agent: "warehouse" }])).toEqual(
      [],
    );
    expect(
      checkProcess(
        { ...services, warehouse: { summary: " ", operations: ["notify", "Notify!", "notify"] } },
        [...steps, { ...notify, agent: "warehouse", undoOperation: "notify" }],
      ),
    ).toEqual([
      "src/domain/process.ts: service warehouse has no summary",
      "src/domain/process.ts: operation warehouse/Notify! must be a lowercase letter followed by letters, such as charge",
      "src/domain/process.ts: service warehouse declares an operation twice",
      "src/domain/process.ts: operation warehouse/Notify! is declared but no step calls it",
    ]);
    expect(checkProcess({}, [])).toEqual(["src/domain/process.ts: SERVICES declares no service"]);
  });
});
