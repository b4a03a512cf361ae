// Entity dispatch: hands an entity's queued operations to its function as one batch, then commits in one
// transaction the new state, the responses to calling orchestrations and the signals the operations sent.
// Because that commit is atomic, each operation takes effect exactly once even if the process dies.
import crypto from "node:crypto";
import { EventType, newEvent } from "./history";
import { entityEnqueueOps, toSchedulerId } from "./records";
import { isTerminal, type EntityRequest, type StoreOp } from "./store";
import type { EngineServices, EntityIdLike } from "./types";

/** What the SDK's entity handler returns (EntityState). */
interface EntityStateShape {
  entityExists: boolean;
  entityState?: string;
  results: Array<{ isError: boolean; result?: string }>;
  signals: Array<{ target: EntityIdLike; name: string; input?: string }>;
}

export async function runEntityBatch(
  s: EngineServices,
  schedulerId: string,
  batchSize: number,
): Promise<void> {
  const store = s.store();
  const e = store.entities.get(schedulerId);
  if (!e || e.queue.length === 0) return;
  const batch = e.queue.slice(0, batchSize).map((q) => ({ ...q }));
  const reg = s.lookup(e.name, "entity");
  let out: EntityStateShape;
  const failAll = (message: string): EntityStateShape => ({
    entityExists: e.exists,
    entityState: e.state,
    results: batch.map(() => ({ isError: true, result: JSON.stringify(message) })),
    signals: [],
  });
  if (!reg) {
    out = failAll(`no entity function named '${e.name}' is registered in this app`);
  } else {
    try {
      out = (await s.invoke(
        reg,
        {
          self: { name: e.name, key: e.key },
          exists: e.exists,
          state: e.state,
          batch: batch.map((q) => ({
            id: q.id,
            name: q.name,
            signal: q.signal,
            input: q.input,
            parent: q.parent?.instanceId,
          })),
        },
        s.makeContext(reg),
      )) as EntityStateShape;
      if (!out || !Array.isArray(out.results))
        throw new Error("the entity handler did not return an EntityState");
    } catch (err) {
      out = failAll(`entity '${schedulerId}' failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!s.writable()) return;
  const at = s.clock.now();
  const ops: StoreOp[] = [
    {
      k: "patchEntity",
      id: schedulerId,
      set: {
        exists: out.entityExists === true,
        state: out.entityState ?? null,
        lastModified: at.toISOString(),
      },
      consume: batch.length,
    },
  ];
  const wake: string[] = [];
  batch.forEach((q, i) => {
    if (q.signal || !q.parent) return;
    const caller = store.instances.get(q.parent.instanceId);
    if (!caller || caller.executionId !== q.parent.executionId || isTerminal(caller.runtimeStatus)) return;
    const res = out.results[i] ?? { isError: false, result: undefined };
    const response = res.isError ? { result: res.result, exceptionType: "Error" } : { result: res.result };
    ops.push({
      k: "patchInstance",
      id: caller.instanceId,
      deliver: [newEvent(EventType.EventRaised, at, { Name: q.id, Input: JSON.stringify(response) })],
    });
    wake.push(caller.instanceId);
  });
  const created = new Set<string>();
  const targets: string[] = [];
  for (const signal of out.signals ?? []) {
    const target = toSchedulerId(signal.target);
    if (!s.lookup(signal.target.name, "entity")) {
      s.log(
        `durable: entity ${schedulerId} signalled '${target}', which is not a registered entity; dropped`,
      );
      continue;
    }
    const request: EntityRequest = {
      id: crypto.randomUUID(),
      name: signal.name,
      signal: true,
      input: signal.input || undefined,
      enqueuedTime: at.toISOString(),
    };
    ops.push(...entityEnqueueOps(s.store(), target, request, created));
    targets.push(target);
  }
  s.commit(ops);
  for (const id of wake) s.markReady(id, "entityResponse");
  for (const t of targets) s.markEntityReady(t, "entityOperation");
  if (e.queue.length) s.markEntityReady(schedulerId);
}
