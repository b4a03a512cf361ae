import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { startAttemptWith } from "../scheduler/durableClient";
import type { StartAttempt } from "../scheduler/starter";

/**
 * Starts attempts through the invocation's durable client, which is built only once an attempt starts: building it
 * costs about 0.1 ms of CPU, and most claim rounds an invocation asks for run in another invocation or claim nothing.
 */
export function startAttemptsIn(context: InvocationContext): StartAttempt {
  return startAttemptWith(() => df.getClient(context));
}
