/**
 * The process declaration: the remote services the process calls and the steps of the order workflow, in order,
 * each with its service, its operation and undo, and the bodies it sends. Everything that names a service derives
 * from SERVICES (the agent functions, the request queues, the `<SERVICE>_URL` settings, infra/process.json and the
 * Bicep built on it, the dashboard's fault form, the generated docs) or is checked against it by a unit test or
 * at start-up. Adding or removing a step starts here (docs/architecture.md#the-process-declaration).
 */
import { orderTotal } from "./order";
import { checkProcess, type ServiceDeclaration } from "./services";
import type { StepDefinition, WorkflowDefinition } from "./workflow";

/** The remote services, by name (lowercase letters: see SERVICE_NAME in ./services). */
export const SERVICES = {
  inventory: {
    summary: "Holds the stock: reserves an order's items, and releases the reservation.",
    operations: ["reserve", "release"],
  },
  payment: {
    summary: "Charges the order's total, and refunds the charge.",
    operations: ["charge", "refund"],
  },
  shipping: {
    summary: "Books the shipment to the order's address, and cancels the booking.",
    operations: ["book", "cancel"],
  },
} as const satisfies Record<string, ServiceDeclaration>;

/** Picks one string field of a service's answer, if present. */
function pick(result: unknown, field: string): Record<string, unknown> | null {
  const value = (result as Record<string, unknown> | null)?.[field];
  return typeof value === "string" ? { [field]: value } : null;
}

/** Order workflow v1: reserve inventory → charge payment → book shipping; undone in reverse. */
export const orderWorkflowV1: WorkflowDefinition = Object.freeze({
  name: "order",
  version: 1,
  steps: Object.freeze([
    {
      name: "reserveInventory",
      agent: "inventory",
      doOperation: "reserve",
      undoOperation: "release",
      doRequest: (order) => ({
        orderId: order.orderId,
        items: order.items.map(({ sku, quantity }) => ({ sku, quantity })),
      }),
      compensationFrom: (result) => pick(result, "reservationId"),
      undoRequest: (order, compensation) => ({ orderId: order.orderId, ...compensation }),
    },
    {
      name: "chargePayment",
      agent: "payment",
      doOperation: "charge",
      undoOperation: "refund",
      doRequest: (order) => ({ orderId: order.orderId, amount: orderTotal(order), currency: order.currency }),
      compensationFrom: (result) => pick(result, "chargeId"),
      undoRequest: (order, compensation) => ({ orderId: order.orderId, ...compensation }),
    },
    {
      name: "bookShipping",
      agent: "shipping",
      doOperation: "book",
      undoOperation: "cancel",
      doRequest: (order) => ({ orderId: order.orderId, address: order.shippingAddress }),
      compensationFrom: (result) => pick(result, "trackingNumber"),
      undoRequest: (order, compensation) => ({ orderId: order.orderId, ...compensation }),
    },
  ] satisfies StepDefinition[]),
});

/**
 * Every version of the order workflow this build runs: new orders start on the newest, and a record keeps the one
 * it started on, so a version stays here while any record may still name it (docs/extending.md). A later version
 * is declared beside v1, built from it with withStepAfter (./versions), and may call a service v1 does not.
 */
export const ORDER_WORKFLOWS: readonly WorkflowDefinition[] = Object.freeze([orderWorkflowV1]);

// An unsound declaration stops the app as it loads, saying what to fix, rather than leaving a step to time out.
const problems = checkProcess(
  SERVICES,
  ORDER_WORKFLOWS.flatMap((workflow) => workflow.steps),
);
if (problems.length > 0) {
  throw new Error(`The process declaration is unsound:\n  - ${problems.join("\n  - ")}`);
}
