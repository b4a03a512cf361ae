import {
  claim,
  hasUndo,
  stepDispatched,
  stepSucceeded,
  submit,
  type Order,
  type StateRecord,
  type TransitionResult,
  type WorkflowDefinition,
} from "../../src/domain";
import { DEFAULT_FIXTURE } from "./fixtureWorkflows";

export const T0 = new Date("2026-11-29T10:00:00.000Z");
export const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

/** A PAGING_TOKEN_KEY for tests that build the config from a few settings: it has no default. */
export const TEST_PAGING_KEY = "test-paging-key-of-the-tests-that-load-a-config";

/** The status queue the sample order asks to hear about it on. */
export const SAMPLE_REPLY_TO = "status-demo";

export function sampleOrder(overrides: Partial<Order> = {}): Order {
  return {
    orderId: "ORD-1001",
    customerId: "C-42",
    items: [{ sku: "SKU-1", quantity: 2, unitPrice: 9.99 }],
    currency: "EUR",
    shippingAddress: { line1: "1 Main St", city: "Berlin", postalCode: "10115", country: "DE" },
    replyTo: SAMPLE_REPLY_TO,
    ...overrides,
  };
}

/** Unwraps a transition the test expects to succeed, failing with the refusal's reason otherwise. */
export function ok(result: TransitionResult): StateRecord {
  if (!result.ok) throw new Error(`unexpected refusal ${result.refusal.code}: ${result.refusal.reason}`);
  return result.record;
}

/**
 * A new order's record on `workflow`: by default a fixture workflow (./fixtureWorkflows), since the engine is
 * generic over the workflow; a test of the app that runs the sample process passes orderWorkflowV1.
 */
export function pendingRecord(
  order: Order = sampleOrder(),
  workflow: WorkflowDefinition = DEFAULT_FIXTURE,
): StateRecord {
  return submit(order, { now: T0, workflow });
}

export function claimedRecord(now = at(1), workflow: WorkflowDefinition = DEFAULT_FIXTURE): StateRecord {
  return ok(claim(pendingRecord(sampleOrder(), workflow), { now, claimTimeoutSeconds: 60 }));
}

/** A Processing record whose first `succeeded` steps succeeded and, if `dispatchNext`, the next one is dispatched. */
export function processingRecord(
  succeeded: number,
  dispatchNext = false,
  workflow: WorkflowDefinition = DEFAULT_FIXTURE,
): StateRecord {
  if (succeeded > workflow.steps.length || (dispatchNext && succeeded >= workflow.steps.length)) {
    throw new Error(`processingRecord: ${workflow.name} has ${workflow.steps.length} steps`);
  }
  let record = claimedRecord(at(1), workflow);
  const lockedBy = record.lockedBy!;
  for (let i = 0; i < succeeded; i++) {
    record = ok(stepDispatched(record, { now: at(2 + i), lockedBy, stepIndex: i, stepTimeoutSeconds: 30 }));
    record = ok(
      stepSucceeded(record, {
        now: at(3 + i),
        lockedBy,
        stepIndex: i,
        result: { id: i },
        // What an undo would need; a step without undo has none (compensationFrom is the undo's).
        compensation: hasUndo(workflow.steps[i]!) ? { undo: i } : null,
      }),
    );
  }
  if (dispatchNext) {
    record = ok(
      stepDispatched(record, { now: at(10), lockedBy, stepIndex: succeeded, stepTimeoutSeconds: 30 }),
    );
  }
  return record;
}
