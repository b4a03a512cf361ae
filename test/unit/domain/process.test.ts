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
  hasUndo,
  orderWorkflowV1,
  serviceUrlSetting,
  type ServiceDeclaration,
} from "../../../src/domain";
import { sampleOrder } from "../../support/domain";

/**
 * The sample's process, step by step. This file is the one that states it (here, and in the bodies below): a fork that changes the declaration
 * changes this table with it (docs/extending.md); every other test derives the steps from the declaration or runs
 * on a declaration of its own, like the rules' tests below. A step without undo has null for its undo.
 */
const SAMPLE_STEPS = [
  ["reserveInventory", "inventory", "reserve", "release"],
  ["chargePayment", "payment", "charge", "refund"],
  ["bookShipping", "shipping", "book", "cancel"],
];

describe("the process declaration", () => {
  it("declares the sample's steps in order, each with its service, operation and undo, and nothing else", () => {
    expect(
      orderWorkflowV1.steps.map((s) => [s.name, s.agent, s.doOperation, s.undoOperation ?? null]),
    ).toEqual(SAMPLE_STEPS);
    // Every declared service is one a step calls, in the order the steps first call them.
    expect(AGENT_NAMES).toEqual([...new Set(orderWorkflowV1.steps.map((s) => s.agent))]);
    expect(agentNameSchema.options).toEqual(AGENT_NAMES);
    expect(checkProcess(SERVICES, orderWorkflowV1.steps)).toEqual([]);
  });

  it("builds the sample's request bodies from the immutable order, and undo bodies from what the success recorded", () => {
    const order = sampleOrder();
    const step = (name: string) => orderWorkflowV1.steps.find((s) => s.name === name)!;
    const undoable = (name: string) => {
      const found = step(name);
      if (!hasUndo(found)) throw new Error(`${name} declares no undo`);
      return found;
    };
    expect(step("reserveInventory").doRequest(order)).toEqual({
      orderId: "ORD-1001",
      items: [{ sku: "SKU-1", quantity: 2 }],
    });
    expect(step("chargePayment").doRequest(order)).toEqual({
      orderId: "ORD-1001",
      amount: 19.98,
      currency: "EUR",
    });
    expect(step("bookShipping").doRequest(order)).toMatchObject({ address: { city: "Berlin" } });
    const charge = undoable("chargePayment");
    const compensation = charge.compensationFrom({ orderId: "ORD-1001", chargeId: "CHG-1", amount: 19.98 });
    expect(compensation).toEqual({ chargeId: "CHG-1" });
    expect(charge.undoRequest(order, compensation)).toEqual({ orderId: "ORD-1001", chargeId: "CHG-1" });
    // Outcome unknown (reply lost): the undo names the order only.
    expect(charge.undoRequest(order, null)).toEqual({ orderId: "ORD-1001" });
    expect(undoable("reserveInventory").compensationFrom("not an object")).toBeNull();
  });

  it("names each service's queue, URL setting and agent function by one rule", () => {
    expect([
      agentRequestQueue("courier"),
      serviceUrlSetting("courier"),
      agentFunctionName("courier"),
    ]).toEqual(["courier-requests", "COURIER_URL", "courierAgent"]);
  });
});

/** A declaration of the rules' own, so that they are tested whatever the sample's process is. */
const services: Record<string, ServiceDeclaration> = {
  stock: { summary: "Holds the stock.", operations: ["reserve", "release"] },
  bank: { summary: "Moves the money.", operations: ["charge", "refund"] },
};
/** The two builders an undo is declared with, beside its operation. */
const undoBodies = { compensationFrom: () => null, undoRequest: () => ({}) };
const steps = [
  { name: "reserveStock", agent: "stock", doOperation: "reserve", undoOperation: "release", ...undoBodies },
  { name: "chargeCard", agent: "bank", doOperation: "charge", undoOperation: "refund", ...undoBodies },
];

describe("the rules a declaration is held to at load", () => {
  it("refuses a step calling an undeclared service or operation, naming the step and where to declare it", () => {
    const { bank: _dropped, ...withoutBank } = services;
    expect(checkProcess(withoutBank, steps)).toEqual([
      'src/domain/process.ts: step chargeCard calls service "bank", which SERVICES in src/domain/process.ts does not declare (declared: stock)',
    ]);
    const renamed = steps.map((s) => (s.name === "chargeCard" ? { ...s, undoOperation: "void" } : s));
    expect(checkProcess(services, renamed)).toEqual([
      "src/domain/process.ts: operation bank/refund is declared but no step calls it",
      "src/domain/process.ts: step chargeCard calls bank/void, an operation SERVICES.bank.operations in src/domain/process.ts does not declare (declared: charge, refund)",
    ]);
  });

  it("refuses a service no step calls, and names the queues, settings and functions cannot carry", () => {
    const courier = { summary: "Delivers the parcel.", operations: ["book", "cancel"] };
    expect(checkProcess({ ...services, courier }, steps)).toEqual([
      "src/domain/process.ts: service courier is declared but no step of ORDER_WORKFLOWS calls it",
    ]);
    const book = { name: "bookCourier", doOperation: "book", undoOperation: "cancel", ...undoBodies };
    expect(
      checkProcess({ ...services, Cou_rier: courier }, [...steps, { ...book, agent: "Cou_rier" }]),
    ).toEqual([
      'src/domain/process.ts: service "Cou_rier" must be lowercase letters only (it names Cou_rier-requests, COU_RIER_URL, Cou_rierAgent)',
    ]);
    expect(checkProcess({ ...services, courier }, [...steps, { ...book, agent: "courier" }])).toEqual([]);
    expect(
      checkProcess({ ...services, courier: { summary: " ", operations: ["book", "Book!", "book"] } }, [
        ...steps,
        { ...book, agent: "courier", undoOperation: "book" },
      ]),
    ).toEqual([
      "src/domain/process.ts: service courier has no summary",
      "src/domain/process.ts: operation courier/Book! must be a lowercase letter followed by letters, such as charge",
      "src/domain/process.ts: service courier declares an operation twice",
      "src/domain/process.ts: operation courier/Book! is declared but no step calls it",
    ]);
    expect(checkProcess({}, [])).toEqual(["src/domain/process.ts: SERVICES declares no service"]);
  });

  it("takes a step without undo, declared with none of the undo's parts, and refuses one with some of them", () => {
    const fraud = { summary: "Screens the order.", operations: ["screen"] };
    const screen = { name: "screenOrder", agent: "fraud", doOperation: "screen" };
    expect(checkProcess({ ...services, fraud }, [steps[0]!, screen, steps[1]!])).toEqual([]);
    const { compensationFrom: _dropped, ...withoutCompensation } = steps[1]!;
    expect(checkProcess(services, [steps[0]!, withoutCompensation])).toEqual([
      "src/domain/process.ts: step chargeCard declares undoOperation, undoRequest but not compensationFrom: add compensationFrom for a step that is undone, or remove undoOperation and undoRequest for a step without undo",
    ]);
    // An undo declared by its operation only, on an operation the service lacks: both are named.
    expect(
      checkProcess({ ...services, fraud }, [...steps, { ...screen, undoOperation: "unscreen" }]),
    ).toEqual([
      "src/domain/process.ts: step screenOrder declares undoOperation but not compensationFrom, undoRequest: add compensationFrom and undoRequest for a step that is undone, or remove undoOperation for a step without undo",
      "src/domain/process.ts: step screenOrder calls fraud/unscreen, an operation SERVICES.fraud.operations in src/domain/process.ts does not declare (declared: screen)",
    ]);
    // A step that loses its undo leaves the undo's operation declared and uncalled.
    const { undoOperation: _op, compensationFrom: _from, undoRequest: _request, ...chargeOnly } = steps[1]!;
    expect(checkProcess(services, [steps[0]!, chargeOnly])).toEqual([
      "src/domain/process.ts: operation bank/refund is declared but no step calls it",
    ]);
  });
});
