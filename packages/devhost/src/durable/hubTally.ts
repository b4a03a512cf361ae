// What the orchestrations of a stopped task hub did, counted from their histories: episodes, activities,
// timers, events. For tools that price an app's durable work (a benchmark's "actions per order"), which run the
// app in another process and so can only read the hub it leaves behind.
import fs from "node:fs";
import { eventTypeName } from "./history";
import { TaskHubStore, type RuntimeStatus } from "./store";

export interface InstanceTally {
  instanceId: string;
  name: string;
  runtimeStatus: RuntimeStatus;
  /** History events of the current execution by type name ("OrchestratorStarted", "TaskScheduled", ...). */
  events: Record<string, number>;
  /** Timers the orchestrator cancelled (they never fire, so no TimerFired stands for them). */
  cancelledTimers: number;
}

/**
 * Every orchestration instance of the task hub in `dir` (`<dataDir>/<taskHubName>`), tallied. The hub must not
 * be in use: opening it takes its lock, and a running engine's hub is refused.
 */
export function tallyTaskHub(dir: string): InstanceTally[] {
  if (!fs.existsSync(dir)) throw new Error(`no task hub at ${dir}`);
  const store = TaskHubStore.open(dir);
  try {
    return [...store.instances.values()].map((r) => {
      const events: Record<string, number> = {};
      for (const e of r.history) {
        const name = eventTypeName(e.EventType);
        events[name] = (events[name] ?? 0) + 1;
      }
      return {
        instanceId: r.instanceId,
        name: r.name,
        runtimeStatus: r.runtimeStatus,
        events,
        cancelledTimers: r.cancelledTimers.length,
      };
    });
  } finally {
    store.close();
  }
}
