// The order app as a later build would ship it: the same functions, plus workflow "order" v2 registered at
// start-up. v2 = v1 with one more step, reservePackaging (a shipping box reserved on the inventory service),
// right after chargePayment (in the sample, before bookShipping); every other step is v1's, taken from v1 itself
// (withStepAfter, src/domain/versions.ts), so a step added to v1 is in v2 too.
// The e2e versioning test loads it with the devhost after the plain app (v1 only) has run on the same data
// directory. ORDER_APP_ENTRY (set by test/support/e2eChild.ts) names the
// transpiled app entry; its modules are the app's own, so the registry is the one the functions use.
"use strict";

const path = require("node:path");

const entry = process.env.ORDER_APP_ENTRY;
if (!entry) throw new Error("ORDER_APP_ENTRY must name the transpiled order app entry (src/index.js)");
const src = path.dirname(entry);
const { registerWorkflow } = require(path.join(src, "app", "workflows"));
const { orderWorkflowV1, withStepAfter } = require(path.join(src, "domain"));

/** One standard box per order. Its undo names the reservation, so it releases the box and nothing else. */
const reservePackaging = {
  name: "reservePackaging",
  agent: "inventory",
  doOperation: "reserve",
  undoOperation: "release",
  doRequest: (order) => ({ orderId: order.orderId, items: [{ sku: "BOX-STANDARD", quantity: 1 }] }),
  compensationFrom: (result) =>
    result && typeof result.reservationId === "string" ? { reservationId: result.reservationId } : null,
  undoRequest: (order, compensation) => ({ orderId: order.orderId, ...compensation }),
};

registerWorkflow({
  name: "order",
  version: 2,
  steps: withStepAfter(orderWorkflowV1, "chargePayment", reservePackaging),
});

require(entry);
