// Resume after start: what the engine picks up from a persisted task hub when it starts (or after a rewind):
// instances with queued messages, activities scheduled but never answered (run again: at least once), timers
// created but neither fired nor cancelled (armed again), and entities with queued operations. Plain functions
// over the hub, taking the engine's dispatch callbacks.
import { EventType, type HistoryEvent } from "./history";
import { isTerminal, type InstanceRecord, type TaskHubStore } from "./store";
import type { ActivityWork, TimerWork } from "./types";

export interface ResumeDeps {
  markReady(instanceId: string): void;
  enqueueActivity(work: ActivityWork): void;
  armTimer(work: TimerWork): void;
}

export interface HubResumeDeps extends ResumeDeps {
  /** Marks an entity with queued operations runnable (the engine pumps once it has resumed everything). */
  entityReady(schedulerId: string): void;
  log(line: string): void;
}

/** Resumes every running instance and non-empty entity queue of the hub, and logs what it found. */
export function resumeHub(store: TaskHubStore, taskHubName: string, d: HubResumeDeps): void {
  let instances = 0;
  let activities = 0;
  let timers = 0;
  for (const r of store.instances.values()) {
    if (isTerminal(r.runtimeStatus)) continue;
    instances++;
    const resumed = resumeInstance(r, d);
    activities += resumed.activities;
    timers += resumed.timers;
  }
  let entities = 0;
  for (const e of store.entities.values()) {
    if (e.queue.length) {
      d.entityReady(e.schedulerId);
      entities++;
    }
  }
  if (instances || entities) {
    d.log(
      `durable: resumed task hub ${taskHubName}: ${instances} running instance(s), ${activities} activity(ies) to run again, ` +
        `${timers} timer(s), ${entities} entity queue(s)`,
    );
  }
}

/** Picks an instance up from its history: its queued messages, unanswered activities and pending timers. */
export function resumeInstance(r: InstanceRecord, d: ResumeDeps): { activities: number; timers: number } {
  let activities = 0;
  let timers = 0;
  if (r.inbox.length) d.markReady(r.instanceId);
  const answered = new Set<number>();
  const fired = new Set<number>();
  for (const e of [...r.history, ...r.inbox]) {
    if (e.EventType === EventType.TaskCompleted || e.EventType === EventType.TaskFailed) {
      answered.add(e.TaskScheduledId as number);
    }
    if (e.EventType === EventType.TimerFired) fired.add(e.TimerId as number);
  }
  for (const e of r.history) {
    if (e.EventType === EventType.TaskScheduled && !answered.has(e.EventId)) {
      // Started (or about to be) before the process died, never finished: run it again (at least once).
      d.enqueueActivity(activityWorkOf(r, e));
      activities++;
    }
    if (
      e.EventType === EventType.TimerCreated &&
      !fired.has(e.EventId) &&
      !r.cancelledTimers.includes(e.EventId)
    ) {
      d.armTimer({
        instanceId: r.instanceId,
        executionId: r.executionId,
        timerId: e.EventId,
        fireAt: e.FireAt as string,
      });
      timers++;
    }
  }
  return { activities, timers };
}

function activityWorkOf(r: InstanceRecord, scheduled: HistoryEvent): ActivityWork {
  return {
    instanceId: r.instanceId,
    executionId: r.executionId,
    taskId: scheduled.EventId,
    name: scheduled.Name as string,
    input: scheduled.Input,
    ...(scheduled.FireAt ? { notBefore: scheduled.FireAt } : {}),
  };
}
