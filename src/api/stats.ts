import type { HttpResponseInit } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import { AGENT_NAMES, unavailableUntil } from "../domain";
import type { Logger } from "../services/logger";
import { json } from "./responses";

/** Each remote service's shared circuit breaker, as an operator reads it: one point read per service. */
async function serviceBreakers(deps: Pick<Dependencies, "breaker" | "now">) {
  const now = deps.now();
  return Promise.all(
    AGENT_NAMES.map(async (service) => {
      const record = await deps.breaker(service).current();
      return {
        service,
        state: record.state,
        /** Until when calls are refused (open, or a probe in flight); null when calls go through. */
        unavailableUntil: unavailableUntil(record, now)?.toISOString() ?? null,
        since: record.openedAt,
        consecutiveFailures: record.failures,
        failedProbes: record.failedProbes,
        probe: record.probe,
      };
    }),
  );
}

export async function statsRequest(
  deps: Pick<Dependencies, "states" | "config" | "breaker" | "now">,
): Promise<HttpResponseInit> {
  const [counts, oldestPending, services] = await Promise.all([
    deps.states.countByState(),
    deps.states.oldestPendingCreatedAt(),
    serviceBreakers(deps),
  ]);
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
    services,
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
