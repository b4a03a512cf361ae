import type { DurableClient } from "durable-functions";
import { parseInstanceId, quoteValue, replyEventName, type AgentReply } from "../domain";
import type { AfterReply, RecordedAnswer } from "./activities";
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
  /** Raises on the attempt the move an answer it waits for led to, once the reply path has recorded it. */
  deliverRecorded(reply: AgentReply, recorded: AfterReply): Promise<void>;
  getStatus: DurableClient["getStatus"];
}

export function attemptClient(client: DurableClient): AttemptClient {
  return {
    async start(instanceId, orderId, traceparent, dispatched) {
      const input: SchedulerInput = {
        orderId,
        ...(traceparent ? { traceparent } : {}),
        ...(dispatched ? { dispatched } : {}),
      };
      await client.startNew(SCHEDULER_ORCHESTRATION, { instanceId: attemptId(instanceId), input });
    },
    async deliverRecorded(reply, recorded) {
      const event: RecordedAnswer = { requestId: reply.requestId, recorded };
      await client.raiseEvent(
        attemptId(reply.instanceId),
        replyEventName(reply.stepIndex, reply.kind),
        event,
      );
    },
    getStatus: (instanceId, options) => client.getStatus(attemptId(instanceId), options),
  };
}

/** Starts the Scheduler orchestration of a claimed attempt, with the claim's lockedBy as its instance id. */
export function startAttemptWith(client: DurableClient): StartAttempt {
  const attempts = attemptClient(client);
  return (instanceId, orderId, traceparent, dispatched) =>
    attempts.start(instanceId, orderId, traceparent, dispatched);
}
