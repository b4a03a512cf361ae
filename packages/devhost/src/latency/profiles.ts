// The latency profiles: how long each hop takes in Azure, with where each figure comes from. docs/latency.md
// lists the same figures and sources; a figure the documentation does not give is marked as an assumption.
import { z } from "zod";
import type { Range } from "./random";

export const LATENCY_PROFILE_NAMES = ["none", "azure-storage", "durable-task-scheduler"] as const;
export type LatencyProfileName = (typeof LATENCY_PROFILE_NAMES)[number];

/** How durable messages reach the engine. */
export type DurableLatency =
  | {
      /** The Azure Storage provider: queues polled with a randomized exponential back-off (backoff.ts). */
      kind: "queue-polling";
      /** Enqueueing and dequeueing one message, with the history write around it, on a queue being polled. */
      queueOperationMs: Range;
      /** The wait after an empty poll, before it grows. */
      minPollingIntervalMs: number;
      /** How far each back-off increment is randomized either way. */
      backoffRandomization: number;
      /** The back-off's maximum when host.json sets no maxQueuePollingInterval. */
      defaultMaxQueuePollingIntervalMs: number;
    }
  | {
      /** The Durable Task Scheduler: work items pushed to connected workers over a gRPC stream. */
      kind: "push";
      /** An orchestrator or entity message (start, event, completion, timer) to the worker. */
      orchestratorMessageMs: Range;
      /** An activity work item to the worker. */
      activityWorkItemMs: Range;
    };

/** Cold start of a per-function scale group of the Flex Consumption plan after it scaled to zero. */
export interface ColdStartLatency {
  /** How long a group must have run nothing before it has scaled to zero. */
  idleAfterMs: number;
  /** The HTTP group: an instance is allocated when the request arrives. */
  httpMs: Range;
  /** Other groups (durable, and each other trigger's function): the scale controller must notice the work first. */
  triggerMs: Range;
}

export interface LatencyProfile {
  name: string;
  /** A Service Bus message, from the broker to a function that is listening. */
  serviceBusDeliveryMs: Range;
  durable: DurableLatency;
  /** Absent: no cold starts (instances always ready). */
  coldStart?: ColdStartLatency;
}

export interface FigureSource {
  /** What the figure is. */
  figure: string;
  title: string;
  url: string;
  /** What the source says, or, where it gives no figure, the assumption made. */
  note: string;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** Flex Consumption cold starts, the same whichever durable backend the app uses. */
const FLEX_COLD_START: ColdStartLatency = {
  idleAfterMs: 10 * MINUTE,
  httpMs: [1 * SECOND, 3 * SECOND],
  triggerMs: [1 * SECOND, 13 * SECOND],
};

/** Service Bus delivery to a listening receiver in the same region. */
const SERVICE_BUS_DELIVERY: Range = [10, 50];

export const LATENCY_PROFILES: Readonly<Record<Exclude<LatencyProfileName, "none">, LatencyProfile>> = {
  "azure-storage": {
    name: "azure-storage",
    serviceBusDeliveryMs: SERVICE_BUS_DELIVERY,
    durable: {
      kind: "queue-polling",
      queueOperationMs: [20, 100],
      minPollingIntervalMs: 50,
      backoffRandomization: 0.2,
      defaultMaxQueuePollingIntervalMs: 30 * SECOND,
    },
    coldStart: FLEX_COLD_START,
  },
  "durable-task-scheduler": {
    name: "durable-task-scheduler",
    serviceBusDeliveryMs: SERVICE_BUS_DELIVERY,
    durable: { kind: "push", orchestratorMessageMs: [5, 30], activityWorkItemMs: [5, 30] },
    coldStart: FLEX_COLD_START,
  },
};

/** Where the figures come from (docs/latency.md shows the same). */
export const FIGURE_SOURCES: readonly FigureSource[] = [
  {
    figure: "Durable queue polling back-off, maximum 30 s",
    title: "Azure Storage provider (Azure Functions): Queue polling",
    url: "https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-azure-storage-provider#queue-polling",
    note:
      "Random exponential back-off: a poll that finds a message checks again at once; after empty polls the wait " +
      "grows up to maxQueuePollingInterval, 30 s by default. Higher latencies are expected only after inactivity.",
  },
  {
    figure: "Back-off steps: 50 ms minimum, increments randomized by ±20 %",
    title: "DurableTask.AzureStorage source: TaskHubQueue.cs and BackoffPollingHelper.cs",
    url: "https://github.com/Azure/durabletask/blob/main/src/DurableTask.AzureStorage/BackoffPollingHelper.cs",
    note:
      "The provider's queues poll with a minimum interval of 50 ms and a maximum of MaxQueuePollingInterval; each " +
      "empty poll waits 50 ms + r·2^(n-1)·50 ms (r in [0.8, 1.2]), so ~0.1 s, ~0.15 s, ~0.25 s, ... 30 s.",
  },
  {
    figure: "Queue hop 20-100 ms",
    title: "Performance and scale in Durable Functions: Performance targets",
    url: "https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-perf-and-scale",
    note:
      "Assumption derived from the documented targets (5 sequential activities per second per instance, about 200 ms " +
      "for two queue hops and a replay; 50 external events per second): each hop on a busy queue takes 20-100 ms.",
  },
  {
    figure: "Durable Task Scheduler hop 5-30 ms",
    title: "Durable Task Scheduler: Architecture; Durable Task storage providers",
    url: "https://learn.microsoft.com/azure/durable-task/scheduler/durable-task-scheduler",
    note:
      "Work items are dispatched to workers connected over gRPC, with no queue polling; the scheduler is described " +
      "as having the highest throughput of the backends. No latency figure is documented: 5-30 ms is an assumption.",
  },
  {
    figure: "Service Bus delivery 10-50 ms",
    title: "Best practices for performance improvements using Service Bus messaging",
    url: "https://learn.microsoft.com/azure/service-bus-messaging/service-bus-performance-improvements",
    note:
      "The Premium tier is for predictable latency; no latency figure is documented. 10-50 ms from the broker to a " +
      "listening trigger in the same region is an assumption.",
  },
  {
    figure: "Scale groups: http, durable, one per other function",
    title: "Azure Functions Flex Consumption plan hosting: Per-function scaling",
    url: "https://learn.microsoft.com/azure/azure-functions/flex-consumption-plan#per-function-scaling",
    note:
      "HTTP-triggered functions scale together, Durable-triggered functions (orchestration, activity, entity) scale " +
      "together, and every other function scales on its own instances.",
  },
  {
    figure: "Cold start after 10 min idle; 1-3 s (HTTP), 1-13 s (other triggers)",
    title: "Event-driven scaling in Azure Functions: Cold start",
    url: "https://learn.microsoft.com/azure/azure-functions/event-driven-scaling#cold-start",
    note:
      "An app idle 'for a number of minutes' may scale to zero and the next event pays the cold start; no duration is " +
      "documented. Assumptions: 10 min idle; 1-3 s to start an instance; for non-HTTP groups up to 10 s more, the " +
      "scale controller's documented polling of each durable queue once every 10 s, taken for every trigger.",
  },
  {
    figure: "Scale-out rate (not modeled)",
    title: "Event-driven scaling in Azure Functions: Understanding scaling behaviors",
    url: "https://learn.microsoft.com/azure/azure-functions/event-driven-scaling#understanding-scaling-behaviors",
    note:
      "New instances are allocated at most once per second for HTTP triggers and once every 30 s for non-HTTP " +
      "triggers (older documentation). The devhost is one instance, so it models no scale-out.",
  },
];

// ---- validation of a profile given from code ----

const range = z
  .tuple([z.number().int().min(0), z.number().int().min(0)])
  .refine(([min, max]) => min <= max, { message: "min must not exceed max" });

export const latencyProfileSchema = z.object({
  name: z.string().min(1),
  serviceBusDeliveryMs: range,
  durable: z.discriminatedUnion("kind", [
    z.object({
      kind: z.literal("queue-polling"),
      queueOperationMs: range,
      minPollingIntervalMs: z.number().positive(),
      backoffRandomization: z.number().min(0).max(1),
      defaultMaxQueuePollingIntervalMs: z.number().positive(),
    }),
    z.object({ kind: z.literal("push"), orchestratorMessageMs: range, activityWorkItemMs: range }),
  ]),
  coldStart: z.object({ idleAfterMs: z.number().min(0), httpMs: range, triggerMs: range }).optional(),
});
