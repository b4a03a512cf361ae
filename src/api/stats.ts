import type { HttpResponseInit } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import type { Logger } from "../services/logger";
import { json } from "./responses";

export async function statsRequest(
  deps: Pick<Dependencies, "states" | "config" | "now">,
): Promise<HttpResponseInit> {
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

const DEPENDENCY_NAMES = { store: "Cosmos DB", bus: "Service Bus" } as const;

/**
 * 200 when the state store and the bus both answer; 503 naming which does not. The route is anonymous, so the
 * answer names the dependency and nothing more: the error itself, which may hold endpoints, account names or
 * token details, goes to the log.
 */
export async function healthRequest(
  deps: Pick<Dependencies, "health">,
  log: Logger,
): Promise<HttpResponseInit> {
  const checks = (await deps.health.check()).map(({ what, error }) => {
    if (error === undefined) return { what, ok: true as const };
    log.warn(`health: ${what} does not answer: ${String(error)}`);
    return { what, ok: false as const, error: `${DEPENDENCY_NAMES[what]} does not answer` };
  });
  const healthy = checks.every((c) => c.ok);
  return json(healthy ? 200 : 503, { status: healthy ? "healthy" : "unhealthy", checks });
}
