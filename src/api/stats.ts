import type { HttpResponseInit } from "@azure/functions";
import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import {
  AGENT_NAMES,
  agentNameSchema,
  breakerRecordSchema,
  isoTimestamp,
  processStateSchema,
  unavailableUntil,
} from "../domain";
import { DEPENDENCIES, type Dependency } from "../app/health";
import type { Logger } from "../telemetry/logger";
import { json } from "./responses";

const count = z.int().nonnegative();

/** Each remote service's shared circuit breaker, as an operator reads it. */
const serviceBreakerSchema = z.strictObject({
  service: agentNameSchema,
  state: breakerRecordSchema.shape.state,
  unavailableUntil: isoTimestamp
    .nullable()
    .describe("Until when calls are refused (open, or a probe in flight); null when calls go through"),
  since: isoTimestamp.nullable().describe("Start of the current outage; null while closed"),
  consecutiveFailures: count,
  failedProbes: count,
  probe: breakerRecordSchema.shape.probe,
});

/** The answer of GET /api/stats (the OpenAPI document is built from it). */
export const statsSchema = z.strictObject({
  counts: z.record(processStateSchema, count).describe("Orders per processState"),
  inFlight: count.describe("Processing and Compensating orders"),
  backlog: count.describe("Pending orders"),
  maxInFlight: count,
  maxPendingBacklog: count,
  oldestPendingAgeSeconds: z.number().nonnegative().nullable(),
  services: z.array(serviceBreakerSchema),
  at: isoTimestamp.describe("The server's clock"),
});
type Stats = z.infer<typeof statsSchema>;

/** Each remote service's shared circuit breaker: one point read per service. */
async function serviceBreakers(deps: Pick<Dependencies, "breaker" | "now">): Promise<Stats["services"]> {
  const now = deps.now();
  return Promise.all(
    AGENT_NAMES.map(async (service) => {
      const record = await deps.breaker(service).current();
      return {
        service,
        state: record.state,
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
  } satisfies Stats);
}

const DEPENDENCY_NAMES: Record<Dependency, string> = { store: "Cosmos DB", bus: "Service Bus" };
const dependencySchema = z.enum(DEPENDENCIES);

/** The answer of GET /api/health, healthy or not. */
export const healthSchema = z.strictObject({
  status: z.enum(["healthy", "unhealthy"]),
  checks: z.array(
    z.union([
      z.strictObject({ what: dependencySchema, ok: z.literal(true) }),
      z.strictObject({
        what: dependencySchema,
        ok: z.literal(false),
        error: z.string().describe("Which dependency does not answer; the error itself goes to the log"),
      }),
    ]),
  ),
});

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
  return json(healthy ? 200 : 503, {
    status: healthy ? "healthy" : "unhealthy",
    checks,
  } satisfies z.infer<typeof healthSchema>);
}
