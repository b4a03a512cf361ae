// Building and validating task hub records: new instances, instance ids, inputs, entity ids and entity queues.
import crypto from "node:crypto";
import { EventType, newEvent, toJsonOrUndefined } from "./history";
import type { EntityRecord, EntityRequest, InstanceRecord, StoreOp, TaskHubStore } from "./store";
import { DurableRequestError, type EntityIdLike } from "./types";

// Azure rejects these in instance ids (they break the HTTP API's paths and the storage keys).
const hasForbiddenIdCharacter = (id: string): boolean =>
  /[/\\#?]/.test(id) || [...id].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);

export function newInstanceRecord(
  instanceId: string,
  name: string,
  input: string | undefined,
  version: string | undefined,
  now: Date,
): InstanceRecord {
  return {
    instanceId,
    name,
    ...(version !== undefined ? { version } : {}),
    executionId: crypto.randomUUID(),
    runtimeStatus: "Pending",
    ...(input !== undefined ? { input } : {}),
    createdTime: now.toISOString(),
    lastUpdatedTime: now.toISOString(),
    history: [],
    inbox: [newEvent(EventType.ExecutionStarted, now, { Name: name, Input: input, Version: version })],
    prevActions: [],
    signalsSent: 0,
    cancelledTimers: [],
  };
}

export function validateInstanceId(id: unknown): asserts id is string {
  if (typeof id !== "string" || id.length === 0 || id.length > 256) {
    throw new DurableRequestError(
      400,
      `Instance ID ${JSON.stringify(id)} must be a string of 1 to 256 characters`,
    );
  }
  if (hasForbiddenIdCharacter(id) || id.startsWith("@")) {
    throw new DurableRequestError(
      400,
      `Instance ID '${id}' must not start with '@' or contain '/', '\\', '#', '?' or control characters`,
    );
  }
}

export function serializeInput(value: unknown, what: string): string | undefined {
  try {
    return toJsonOrUndefined(value);
  } catch (err) {
    throw new DurableRequestError(
      400,
      `${what} cannot be serialized to JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

export function toSchedulerId(entity: EntityIdLike): string {
  if (
    !entity ||
    typeof entity.name !== "string" ||
    !entity.name ||
    typeof entity.key !== "string" ||
    !entity.key
  ) {
    throw new DurableRequestError(
      400,
      `An entity id needs a non-empty name and key, got ${JSON.stringify(entity)}`,
    );
  }
  return `@${entity.name.toLowerCase()}@${entity.key}`;
}

export function parseSchedulerId(schedulerId: string): EntityIdLike {
  const at = schedulerId.indexOf("@", 1);
  return { name: schedulerId.substring(1, at), key: schedulerId.substring(at + 1) };
}

/** Ops that append a request to an entity's queue, creating the entity record on first use. */
export function entityEnqueueOps(
  store: TaskHubStore,
  schedulerId: string,
  request: EntityRequest,
  createdInTxn: Set<string>,
): StoreOp[] {
  const exists = store.entities.has(schedulerId) || createdInTxn.has(schedulerId);
  if (exists) return [{ k: "patchEntity", id: schedulerId, enqueue: [request] }];
  createdInTxn.add(schedulerId);
  const { name, key } = parseSchedulerId(schedulerId);
  const record: EntityRecord = {
    schedulerId,
    name,
    key,
    exists: false,
    queue: [request],
    lastModified: request.enqueuedTime,
  };
  return [{ k: "putEntity", r: record }];
}
