import type { DurableClient } from "durable-functions";
import { ATTEMPT_ENDED_EVENT, parseInstanceId, quoteValue, type AgentReply } from "../domain";
import { endsDispatches, type AfterReply, type RecordedAnswer } from "./activities";
import { SCHEDULER_ORCHESTRATION, type SchedulerInput } from "./orchestration";
import type { StartAttempt } from "./starter";

/**
 * The durable client puts instance ids into the paths of its HTTP calls as they are, so an id such as
 * `X:1/terminate?reason=x` would turn one call into another. Every call the app makes goes through here and
 * carries only an id in the attempt format the starter creates, whose alphabet needs no encoding.
 */
function attemptId(instanceId: string): string {
  if (!parseInstanceId(instanceId)) {
    throw new Error(
      `refused a durable call for ${quoteValue(instanceId)}: not an attempt id <orderId>:<attempt>`,
    );
  }
  return instanceId;
}

/** The app's calls on the durable client, each for one validated attempt id. */
export interface AttemptClient {
  start(
    instanceId: string,
    orderId: string,
    traceparent?: string | null,
    dispatched?: SchedulerInput["dispatched"],
  ): Promise<void>;
  /**
   * Tells the attempt what an answer the reply path has recorded led to, when that ends its run of dispatches (the
   * order finished, the attempt stopped or was fenced): ATTEMPT_ENDED_EVENT, carrying the move. The next step's
   * dispatch is not raised: the orchestration's timer covers it (orchestration.ts). Resolves to whether it raised.
   */
  deliverRecorded(reply: AgentReply, recorded: AfterReply): Promise<boolean>;
  getStatus: DurableClient["getStatus"];
}

/**
 * A durable client, or how to get one when a call needs it: building it (`df.getClient`) costs about 0.1 ms of CPU,
 * which an invocation that ends up making no durable call (most replies, a claim round another invocation runs)
 * need not pay.
 */
export type DurableClientSource = DurableClient | (() => DurableClient);

function lazily(source: DurableClientSource): () => DurableClient {
  if (typeof source !== "function") return () => source;
  let made: DurableClient | undefined;
  return () => (made ??= source());
}

export function attemptClient(source: DurableClientSource): AttemptClient {
  const client = lazily(source);
  return {
    async start(instanceId, orderId, traceparent, dispatched) {
      const input: SchedulerInput = {
        orderId,
        ...(traceparent ? { traceparent } : {}),
        ...(dispatched ? { dispatched } : {}),
      };
      await client().startNew(SCHEDULER_ORCHESTRATION, { instanceId: attemptId(instanceId), input });
    },
    async deliverRecorded(reply, recorded) {
      if (!endsDispatches(recorded)) return false;
      const event: RecordedAnswer = { requestId: reply.requestId, recorded };
      await client().raiseEvent(attemptId(reply.instanceId), ATTEMPT_ENDED_EVENT, event);
      return true;
    },
    getStatus: (instanceId, options) => client().getStatus(attemptId(instanceId), options),
  };
}

/** Starts the Scheduler orchestration of a claimed attempt, with the claim's lockedBy as its instance id. */
export function startAttemptWith(client: DurableClientSource): StartAttempt {
  const attempts = attemptClient(client);
  return (instanceId, orderId, traceparent, dispatched) =>
    attempts.start(instanceId, orderId, traceparent, dispatched);
}
