// Activity dispatch: runs one scheduled activity and delivers its completion (or failure) to the
// orchestration's inbox. Results of a stale execution or a finished instance are dropped, as in Azure.
import {
  EventType,
  fromJson,
  newEvent,
  toJson,
  type FailureDetailsPayload,
  type HistoryEvent,
} from "./history";
import { isTerminal } from "./store";
import type { ActivityWork, EngineServices } from "./types";

export async function runActivity(s: EngineServices, w: ActivityWork): Promise<void> {
  const reg = s.lookup(w.name, "activity");
  let event: HistoryEvent;
  if (!reg) {
    event = newEvent(EventType.TaskFailed, s.clock.now(), {
      TaskScheduledId: w.taskId,
      Reason: `Activity function '${w.name}' failed: no activity function named '${w.name}' is registered in this app`,
      Details: "",
    });
  } else {
    try {
      const result = await s.invoke(reg, fromJson(w.input), s.makeContext(reg));
      let text: string;
      try {
        text = toJson(result);
      } catch (err) {
        throw new Error(
          `its result cannot be serialized to JSON (${err instanceof Error ? err.message : String(err)})`,
        );
      }
      event = newEvent(EventType.TaskCompleted, s.clock.now(), {
        TaskScheduledId: w.taskId,
        Result: text,
      });
    } catch (err) {
      event = activityFailure(reg.name, w.taskId, err, s.clock.now());
    }
  }
  deliverActivityResult(s, w, event);
}

const ANSWERS = new Set<number>([EventType.TaskCompleted, EventType.TaskFailed]);

/** Delivers an activity's completion or failure to its orchestration, unless it is no longer wanted. */
export function deliverActivityResult(s: EngineServices, w: ActivityWork, event: HistoryEvent): void {
  if (!s.writable()) return; // the hub is closed: the activity runs again on the next start
  const r = s.store().instances.get(w.instanceId);
  if (!r || r.executionId !== w.executionId || isTerminal(r.runtimeStatus)) return;
  // A task is answered once: a run that was already under way when a rewind scheduled it again may finish too.
  const answered = (e: HistoryEvent): boolean => ANSWERS.has(e.EventType) && e.TaskScheduledId === w.taskId;
  if (r.inbox.some(answered) || r.history.some(answered)) return;
  s.commit([{ k: "patchInstance", id: w.instanceId, deliver: [event] }]);
  s.markReady(w.instanceId, "activityCompleted");
}

/**
 * The failure event for a thrown activity. With an ExceptionPropertiesProvider registered, the SDK's activity
 * wrapper replaces the message with serialized failure details; those become FailureDetails (and the
 * orchestrator a TaskFailedError), as the extension does. Otherwise Reason/Details, read by the SDK as
 * `new Error(`${Reason} \n ${Details}`)`.
 */
function activityFailure(name: string, taskId: number, err: unknown, at: Date): HistoryEvent {
  const error = err instanceof Error ? err : new Error(typeof err === "string" ? err : JSON.stringify(err));
  const details = parseFailureDetails(error.message);
  if (details)
    return newEvent(EventType.TaskFailed, at, { TaskScheduledId: taskId, FailureDetails: details });
  return newEvent(EventType.TaskFailed, at, {
    TaskScheduledId: taskId,
    Reason: `Activity function '${name}' failed: ${error.message}`,
    Details: error.stack ?? "",
  });
}

function parseFailureDetails(message: string): FailureDetailsPayload | undefined {
  if (!message.startsWith("{")) return undefined;
  try {
    const p = JSON.parse(message) as Record<string, unknown>;
    if (
      typeof p.errorType !== "string" ||
      typeof p.errorMessage !== "string" ||
      typeof p.properties !== "object"
    ) {
      return undefined;
    }
    return {
      ErrorType: p.errorType,
      ErrorMessage: p.errorMessage,
      ...(typeof p.stackTrace === "string" ? { StackTrace: p.stackTrace } : {}),
      IsNonRetriable: p.isNonRetriable === true,
      Properties: p.properties as Record<string, unknown>,
    };
  } catch {
    return undefined;
  }
}
