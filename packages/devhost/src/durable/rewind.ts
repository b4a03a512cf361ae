// Rewind of a failed orchestration: it goes back to where it was just before its first failure (a failed
// activity or sub-orchestration, or else the orchestrator's own failure) and runs on from there, so the failed
// work is tried again. The Azure Storage provider clears the failure events in place; the engine cuts the
// history at the first of them instead, because the SDK matches events to tasks by id, and events left past a
// failure could answer tasks a different path of the code would now open under the same ids. What the history
// held past the cut is redone from its cause: activities scheduled before it and not answered before it run
// again (at least once, as after a crash), timers are armed again, failed sub-orchestrations are rewound in
// turn, finished ones deliver their result again, and external events (entity responses included) are
// delivered again in the order they came.
import { EventType, newEvent, type HistoryEvent } from "./history";
import type { InstanceRecord, StoreOp, TaskHubStore } from "./store";

export interface RewindPlan {
  ops: StoreOp[];
  /** Every instance rewound (the one asked for and its failed sub-orchestrations), to resume once committed. */
  rewound: string[];
}

const FAILURES = new Set<number>([EventType.TaskFailed, EventType.SubOrchestrationInstanceFailed]);
const ANSWERS = new Set<number>([
  EventType.SubOrchestrationInstanceCompleted,
  EventType.SubOrchestrationInstanceFailed,
]);

export function planRewind(store: TaskHubStore, instanceId: string, reason: string, at: Date): RewindPlan {
  const plan: RewindPlan = { ops: [], rewound: [] };
  rewindInstance(store, instanceId, reason, at, plan);
  return plan;
}

function rewindInstance(store: TaskHubStore, id: string, reason: string, at: Date, plan: RewindPlan): void {
  const r = store.instances.get(id) as InstanceRecord;
  plan.rewound.push(id);
  let cut = r.history.findIndex((e) => FAILURES.has(e.EventType));
  if (cut < 0) cut = r.history.findIndex((e) => e.EventType === EventType.ExecutionFailed);
  if (cut < 0) cut = r.history.length;
  const kept = r.history.slice(0, cut);
  const redeliver = r.history.slice(cut).filter((e) => e.EventType === EventType.EventRaised);

  const answered = new Set(kept.filter((e) => ANSWERS.has(e.EventType)).map((e) => e.TaskScheduledId));
  const recreate = new Set<HistoryEvent>();
  const childResults: HistoryEvent[] = [];
  for (const created of kept) {
    if (created.EventType !== EventType.SubOrchestrationInstanceCreated || answered.has(created.EventId))
      continue;
    const child = created.InstanceId ? store.instances.get(created.InstanceId) : undefined;
    const ours =
      child?.parent?.instanceId === id &&
      child.parent.executionId === r.executionId &&
      child.parent.taskId === created.EventId;
    if (!child || !ours) recreate.add(created);
    else if (child.runtimeStatus === "Failed") rewindInstance(store, child.instanceId, reason, at, plan);
    else if (child.runtimeStatus === "Completed")
      childResults.push(
        newEvent(EventType.SubOrchestrationInstanceCompleted, at, {
          TaskScheduledId: created.EventId,
          Result: child.output ?? "null",
        }),
      );
    // A terminated child is started again; a running one reports to the parent when it ends.
    else if (child.runtimeStatus === "Terminated") recreate.add(created);
  }

  const history = kept.filter((e) => !recreate.has(e));
  const timers = new Set(history.filter((e) => e.EventType === EventType.TimerCreated).map((e) => e.EventId));
  plan.ops.push({
    k: "patchInstance",
    id,
    set: {
      runtimeStatus: "Pending",
      output: null,
      lastUpdatedTime: at.toISOString(),
      // The code may take another path past the cut; the check starts again from the replay that follows.
      prevActions: [],
      cancelledTimers: r.cancelledTimers.filter((t) => timers.has(t)),
    },
    resetHistory: true,
    append: history,
    // Late messages to the failed instance were for the history past the cut: what they answer is redone.
    replaceInbox: [
      ...redeliver.map((e) => ({ ...e, IsPlayed: false })),
      ...childResults,
      newEvent(EventType.GenericEvent, at, { Data: reason }),
    ],
  });
}
