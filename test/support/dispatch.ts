/**
 * An order taken through the real stores to the dispatch of one of its steps, as the Scheduler records it: what an
 * agent's integration test needs before the agent will act on a request (it acts only on the dispatch its order's
 * state record shows in progress).
 */
import type { Dependencies } from "../../src/app/dependencies";
import {
  claim,
  dispatchedRequest,
  orderWorkflowV1,
  stepDispatched,
  stepSucceeded,
  submit,
  type AgentRequest,
  type Order,
  type StateRecord,
  type TransitionResult,
} from "../../src/domain";

/**
 * Stores `order` and its record, claims attempt 1, runs the steps before `stepIndex` to success and records the
 * dispatch of `stepIndex` at `now` with a deadline `stepTimeoutSeconds` later. Returns the request the dispatcher
 * sends for it, built by the dispatcher's own function.
 */
export async function dispatchedStep(
  deps: Pick<Dependencies, "states" | "orders">,
  order: Order,
  stepIndex: number,
  { now = new Date(), stepTimeoutSeconds = 10 }: { now?: Date; stepTimeoutSeconds?: number } = {},
): Promise<AgentRequest> {
  await deps.orders.ensure(order, now);
  await deps.states.create(submit(order, { now, workflow: orderWorkflowV1 }));
  const apply = async (decide: (r: StateRecord) => TransitionResult): Promise<StateRecord> => {
    const outcome = await deps.states.apply(order.orderId, decide);
    if (outcome.kind !== "written") throw new Error(`${order.orderId}: ${JSON.stringify(outcome)}`);
    return outcome.record;
  };
  let record = await apply((r) => claim(r, { now, claimTimeoutSeconds: 60 }));
  const lockedBy = record.lockedBy!;
  const dispatch = { now, lockedBy, stepTimeoutSeconds };
  for (let i = 0; i < stepIndex; i++) {
    await apply((r) => stepDispatched(r, { ...dispatch, stepIndex: i }));
    record = await apply((r) =>
      stepSucceeded(r, { now, lockedBy, stepIndex: i, result: {}, compensation: null }),
    );
  }
  record = await apply((r) => stepDispatched(r, { ...dispatch, stepIndex }));
  return dispatchedRequest(record, orderWorkflowV1.steps[stepIndex]!, order, {
    instanceId: lockedBy,
    stepIndex,
    kind: "do",
  });
}
