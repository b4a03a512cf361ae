import type { DurableClient } from "durable-functions";
import type { StartAttempt } from "./starter";

export const SCHEDULER_ORCHESTRATION = "scheduler";

/** Starts the Scheduler orchestration of a claimed attempt, with the claim's lockedBy as its instance id. */
export function startAttemptWith(client: DurableClient): StartAttempt {
  return async (instanceId, orderId) => {
    await client.startNew(SCHEDULER_ORCHESTRATION, { instanceId, input: { orderId } });
  };
}
