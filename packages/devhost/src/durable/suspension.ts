// Suspend and resume, as DTFx applies them: a suspended instance runs no orchestrator code; messages that reach
// it meanwhile (events, activity results, timers firing, sub-orchestration results) wait in its inbox and are
// delivered, in the order they came, once it is resumed. The two control messages are recorded in the history
// as ExecutionSuspended and ExecutionResumed; a second suspend (or resume) in a row changes nothing.
import { EventType, type HistoryEvent } from "./history";

export interface InboxSplit {
  /** Whether the instance is suspended once these messages are applied. */
  suspended: boolean;
  /** The suspend and resume messages that took effect, in order. */
  control: HistoryEvent[];
  /**
   * Not suspended at the end: everything the episode appends to the history, in order; messages that arrived
   * while suspended follow the resume that released them.
   */
  events: HistoryEvent[];
  /** Suspended at the end: the messages that keep waiting in the inbox. */
  held: HistoryEvent[];
}

const isControl = (e: HistoryEvent): boolean =>
  e.EventType === EventType.ExecutionSuspended || e.EventType === EventType.ExecutionResumed;

export function splitInbox(suspendedBefore: boolean, inbox: readonly HistoryEvent[]): InboxSplit {
  let suspended = suspendedBefore;
  const events: HistoryEvent[] = [];
  let waiting: HistoryEvent[] = [];
  for (const m of inbox) {
    if (m.EventType === EventType.ExecutionSuspended) {
      if (suspended) continue;
      suspended = true;
      events.push(m);
    } else if (m.EventType === EventType.ExecutionResumed) {
      if (!suspended) continue;
      suspended = false;
      events.push(m, ...waiting);
      waiting = [];
    } else if (suspended) {
      waiting.push(m);
    } else {
      events.push(m);
    }
  }
  const control = events.filter(isControl);
  if (!suspended) return { suspended, control, events, held: [] };
  // Ending suspended, no code runs: even what came before the suspend waits for the resume.
  return { suspended, control, events: control, held: [...events.filter((e) => !isControl(e)), ...waiting] };
}
