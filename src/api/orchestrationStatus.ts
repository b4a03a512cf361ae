import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { OrchestrationRuntimeStatus } from "durable-functions";
import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import { instanceIdFor, instanceIdSchema, isoTimestamp } from "../domain";
import type { AttemptClient } from "../scheduler/durableClient";
import { routeOrderId } from "./params";
import { json, problem } from "./responses";

/** The answer of GET /api/orders/{orderId}/orchestration (the OpenAPI document is built from it). */
export const orchestrationStatusSchema = z.strictObject({
  instanceId: instanceIdSchema.describe(
    "<orderId>:<attempt>, the record's lockedBy while the attempt holds it",
  ),
  runtimeStatus: z.enum(OrchestrationRuntimeStatus),
  customStatus: z.unknown(),
  output: z.unknown(),
  createdTime: isoTimestamp.nullable(),
  lastUpdatedTime: isoTimestamp.nullable(),
});

/** The durable client reports an unknown instance only through the text of the error it throws. */
const isNotFound = (error: unknown): boolean => error instanceof Error && /\bHTTP 404\b/.test(error.message);

/**
 * GET /api/orders/{orderId}/orchestration: the Durable Task status of the record's current attempt, whose instance
 * id is `${orderId}:${attempt}` (the attempt's lockedBy). 404 for an unknown order, an order never claimed
 * (attempt 0) and an instance the task hub does not know (not started yet, or purged).
 */
export async function orchestrationStatusRequest(
  deps: Dependencies,
  client: Pick<AttemptClient, "getStatus">,
  request: HttpRequest,
): Promise<HttpResponseInit> {
  const routeId = routeOrderId(request);
  if (!routeId.ok) return problem(400, routeId.error);
  const orderId = routeId.value;
  const record = await deps.states.get(orderId);
  if (!record) return problem(404, `order ${orderId} not found`);
  if (record.attempt === 0)
    return problem(404, `order ${orderId} has not been claimed yet: no orchestration`);
  const instanceId = instanceIdFor(orderId, record.attempt);
  try {
    const status = await client.getStatus(instanceId, { showInput: false });
    return json(200, {
      instanceId,
      runtimeStatus: status.runtimeStatus,
      customStatus: status.customStatus ?? null,
      output: status.output ?? null,
      createdTime: toIso(status.createdTime),
      lastUpdatedTime: toIso(status.lastUpdatedTime),
    } satisfies z.infer<typeof orchestrationStatusSchema>);
  } catch (error) {
    if (isNotFound(error)) return problem(404, `orchestration ${instanceId} not found`);
    throw error;
  }
}

function toIso(value: Date | string | undefined): string | null {
  if (value === undefined || value === null) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
