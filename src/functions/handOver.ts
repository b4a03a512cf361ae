import type { InvocationContext } from "@azure/functions";
import { dependencies } from "../app/dependencies";
import { startAttemptsIn } from "./attemptStarts";
import { requestClaimRound } from "../scheduler/starter";

/**
 * Hands the place an attempt has just freed (its write gave the place back to its admission shard) to the next
 * due order: a claim round now, coalesced per process, which looks in that shard first. Best effort: should it
 * fail, the starter's timer claims the order a little later, so the write that freed the place, already made,
 * stands either way. The invocation must have the durable client among its inputs.
 */
export async function handOver(context: InvocationContext): Promise<void> {
  try {
    await requestClaimRound(dependencies(), context, startAttemptsIn(context));
  } catch (error) {
    context.warn(
      `handover: claim round failed (${String(error)}); the starter's timer claims the next order`,
    );
  }
}
