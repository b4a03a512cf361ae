// The order app as a later build would ship it: the same functions, plus workflow "order" v2 registered at
// start-up. v2 = v1 with one more step, reservePackaging (a shipping box reserved on the inventory service),
// right after chargePayment (in the sample, before bookShipping); every other step is v1's, taken from v1 itself.
// The e2e versioning test loads it with the devhost after the plain app (v1 only) has run on the same data
// directory. ORDER_APP_ENTRY (set by test/support/e2eChild.ts) names the
// transpiled app entry; its modules are the app's own, so the registry is the one the functions use.
"use strict";

const path = require("node:path");

const entry = process.env.ORDER_APP_ENTRY;
if (!entry) throw new Error("ORDER_APP_ENTRY must name the transpiled order app entry (src/index.js)");
const src = path.dirname(entry);
const { registerWorkflow } = require(path.join(src, "app", "workflows"));
const { orderWorkflowV1 } = require(path.join(src, "domain"));

/**
 * The steps of `base` with `step` inserted after the step named `after`. Built from every step of `base`, so a
 * step added to v1 (src/domain/process.ts) is in v2 too; throws unless the names are exactly v1's, in order, plus
 * the new one, so no step of v1 can go missing or be shadowed without this build failing to start.
 */
function withStepAfter(base, after, step) {
  const names = base.steps.map((s) => s.name);
  const at = names.indexOf(after);
  if (at < 0) throw new Error(`order v${base.version} has no step ${after} (steps: ${names.join(", ")})`);
  if (names.includes(step.name)) throw new Error(`order v${base.version} already has a step ${step.name}`);
  const steps = [...base.steps.slice(0, at + 1), step, ...base.steps.slice(at + 1)];
  const expected = [...names.slice(0, at + 1), step.name, ...names.slice(at + 1)];
  const got = steps.map((s) => s.name);
  if (got.length !== names.length + 1 || got.some((name, i) => name !== expected[i])) {
    throw new Error(
      `order v2 must be v1's steps plus ${step.name}: expected ${expected.join(", ")}, got ${got.join(", ")}`,
    );
  }
  return steps;
}

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
