import type { HttpResponseInit, InvocationContext } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { json } from "./responses";

export async function statsRequest(deps: Dependencies): Promise<HttpResponseInit> {
  const counts = await deps.states.countByState();
  const oldestPending = await deps.states.oldestPendingCreatedAt();
  const now = deps.now();
  return json(200, {
    counts,
    inFlight: counts.Processing + counts.Compensating,
    backlog: counts.Pending,
    maxInFlight: deps.config.maxInFlight,
    maxPendingBacklog: deps.config.maxPendingBacklog,
    oldestPendingAgeSeconds: oldestPending
      ? Math.max(0, (now.getTime() - Date.parse(oldestPending)) / 1000)
      : null,
    at: now.toISOString(),
  });
}

/**
 * 200 when the state store and the bus both answer; 503 naming which does not. The route is anonymous, so the
 * answer names the dependency and nothing more: the error itself, which may hold endpoints, account names or
 * token details, goes to the log.
 */
export async function healthRequest(
  deps: Dependencies,
  context: InvocationContext,
): Promise<HttpResponseInit> {
  const probe = async (what: "store" | "bus", check: () => Promise<unknown>) => {
    try {
      await check();
      return { what, ok: true as const };
    } catch (error) {
      context.warn(`health: ${what} does not answer: ${String(error)}`);
      return {
        what,
        ok: false as const,
        error: `${what === "store" ? "Cosmos DB" : "Service Bus"} does not answer`,
      };
    }
  };
  const sender = deps.serviceBus.createSender("alerts");
  const checks = await Promise.all([
    probe("store", () => deps.cosmos.database(deps.config.cosmosDatabase).read()),
    probe("bus", () => sender.createMessageBatch()),
  ]);
  await sender.close().catch(() => undefined);
  const healthy = checks.every((c) => c.ok);
  return json(healthy ? 200 : 503, { status: healthy ? "healthy" : "unhealthy", checks });
}
