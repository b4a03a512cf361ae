// The delays of a run under a latency profile: each hop draws its delay from its own seeded stream (random.ts),
// the Azure Storage provider's queues keep their polling back-off (backoff.ts), and each Flex Consumption scale
// group remembers when it last ran, to pay a cold start after it has been idle. Every delay applied is logged at
// debug level with its hop, so that a run can be explained; the same seed replays the same draws.
import type { DurableHop } from "../durable/types";
import { QueuePoller } from "./backoff";
import type { LatencyProfile } from "./profiles";
import { fnv1a32, RandomStreams, type Range } from "./random";

/** The trigger types whose functions scale together on Flex Consumption (the others scale one by one). */
const DURABLE_TRIGGERS = new Set(["orchestrationtrigger", "activitytrigger", "entitytrigger"]);

/** The Flex Consumption scale group of a function: "http", "durable", or the function's own. */
export function scaleGroup(functionName: string, triggerType: string): string {
  const type = triggerType.toLowerCase();
  if (type === "httptrigger") return "http";
  if (DURABLE_TRIGGERS.has(type)) return "durable";
  return `function:${functionName}`;
}

export interface LatencyModelOptions {
  profile: LatencyProfile;
  seed: number;
  /** host.json maxQueuePollingInterval, when set. */
  maxQueuePollingIntervalMs?: number;
  /** host.json partitionCount (control queues), default 4. */
  partitionCount?: number;
  /** When the run starts (the clock's now): the queues' pollers start then. */
  startAt: number;
  /** Gets each delay applied, for the debug log. */
  log?: (line: string) => void;
}

const WORK_ITEM_HOPS = new Set<DurableHop>(["activityScheduled"]);

/** Whole milliseconds, always in ms so that a log can be read back by tools and tests. */
function inMs(ms: number): string {
  return `${Math.round(ms)} ms`;
}

/** The delays of one run: pure bookkeeping on the times it is given; the callers wait. */
export class LatencyModel {
  readonly profile: LatencyProfile;
  readonly seed: number;
  readonly maxQueuePollingIntervalMs: number;
  readonly partitionCount: number;
  readonly #random: RandomStreams;
  readonly #log: (line: string) => void;
  readonly #pollers = new Map<string, QueuePoller>();
  /** Per scale group: when it last ran something. */
  readonly #lastActive = new Map<string, number>();
  /** Per scale group: when the instance of its latest cold start is ready. */
  readonly #readyAt = new Map<string, number>();
  /** When the queues' pollers (re)started: the run's start, then the end of each durable cold start. */
  #pollersStartAt: number;

  constructor(options: LatencyModelOptions) {
    this.profile = options.profile;
    this.seed = options.seed;
    const durable = options.profile.durable;
    this.maxQueuePollingIntervalMs =
      options.maxQueuePollingIntervalMs ??
      (durable.kind === "queue-polling" ? durable.defaultMaxQueuePollingIntervalMs : 0);
    this.partitionCount = options.partitionCount ?? 4;
    this.#random = new RandomStreams(options.seed);
    this.#log = options.log ?? (() => {});
    this.#pollersStartAt = options.startAt;
  }

  /** A Service Bus message for `functionName`: the broker's delivery to the listening trigger. */
  serviceBusDelivery(functionName: string): number {
    const ms = this.#draw("serviceBusDelivery", this.profile.serviceBusDeliveryMs);
    this.#log(`Latency: serviceBusDelivery +${inMs(ms)} (${functionName})`);
    return ms;
  }

  /**
   * Cold start of `group` at `now`: the wait until an instance of it runs (0 when one is warm). A group that has
   * run nothing for longer than the profile's idle threshold (or never ran) has scaled to zero.
   */
  coldStart(group: string, now: number): number {
    const cold = this.profile.coldStart;
    if (!cold) return 0;
    const readyAt = this.#readyAt.get(group);
    // Starting already: wait for the same instance.
    if (readyAt !== undefined && readyAt > now) return Math.ceil(readyAt - now);
    const last = this.#lastActive.get(group);
    if (last !== undefined && now - last <= cold.idleAfterMs) return 0;
    const range = group === "http" ? cold.httpMs : cold.triggerMs;
    const ms = this.#draw(`coldStart:${group}`, range);
    this.#readyAt.set(group, now + ms);
    this.#lastActive.set(group, now + ms);
    const idle = last === undefined ? "not run yet" : `idle ${inMs(Math.round(now - last))}`;
    this.#log(`Latency: coldStart +${inMs(ms)} (group ${group}, ${idle})`);
    return ms;
  }

  /** `group` ran something at `now` (an invocation started or ended): it stays warm from then. */
  active(group: string, now: number): void {
    const last = this.#lastActive.get(group);
    if (last === undefined || last < now) this.#lastActive.set(group, now);
  }

  /**
   * A durable message or work item sent at `now` to `target` (an instance id or entity id): how long until the
   * engine takes it. With queue polling this is the queue operation plus the wait for the next poll of the queue
   * (control queue by the target's partition, or the work-item queue); with push, the dispatch alone. A cold
   * durable group adds its cold start, after which its pollers start afresh.
   */
  durableHop(hop: DurableHop, target: string, now: number): number {
    const durable = this.profile.durable;
    const workItem = WORK_ITEM_HOPS.has(hop);
    const starting = this.#readyAt.get("durable") ?? 0;
    const coldMs = this.coldStart("durable", now);
    const readyAt = now + coldMs;
    if (durable.kind === "push") {
      const ms =
        coldMs + this.#draw(hop, workItem ? durable.activityWorkItemMs : durable.orchestratorMessageMs);
      this.active("durable", now + ms);
      const waitedFor = coldMs > 0 ? `, ${inMs(coldMs)} of it for the durable group to start` : "";
      this.#log(`Latency: ${hop} +${inMs(ms)} (${target}${waitedFor})`);
      return ms;
    }
    if (readyAt > starting && coldMs > 0) {
      // A new instance: its pollers start afresh once it runs.
      this.#pollersStartAt = readyAt;
      for (const p of this.#pollers.values()) p.restart(readyAt);
    }
    const queue = workItem
      ? "workitems"
      : `control-${String(fnv1a32(target) % this.partitionCount).padStart(2, "0")}`;
    const poller = this.#poller(queue);
    const visibleAt = now + this.#draw(hop, durable.queueOperationMs);
    const { at: found, backoffMs } = poller.find(Math.max(visibleAt, readyAt));
    const ms = Math.max(0, Math.ceil(found - now));
    this.active("durable", found);
    const polled = Math.max(0, Math.ceil(found - Math.max(visibleAt, readyAt)));
    const waitedFor = coldMs > 0 ? `${inMs(coldMs)} for the durable group to start, ` : "";
    this.#log(
      `Latency: ${hop} +${inMs(ms)} (${target} on ${queue}: ${inMs(Math.ceil(visibleAt - now))} queue, ` +
        `${waitedFor}${inMs(polled)} until the next poll, back-off ${inMs(Math.round(backoffMs))})`,
    );
    return ms;
  }

  #draw(stream: string, range: Range): number {
    return this.#random.stream(stream).between(range);
  }

  #poller(queue: string): QueuePoller {
    let poller = this.#pollers.get(queue);
    if (!poller) {
      const durable = this.profile.durable;
      if (durable.kind !== "queue-polling") throw new Error("LatencyModel: this profile polls no queues");
      poller = new QueuePoller({
        minIntervalMs: durable.minPollingIntervalMs,
        maxIntervalMs: Math.max(this.maxQueuePollingIntervalMs, durable.minPollingIntervalMs),
        randomization: durable.backoffRandomization,
        rng: this.#random.stream(`poll:${queue}`),
        startAt: this.#pollersStartAt,
      });
      this.#pollers.set(queue, poller);
    }
    return poller;
  }
}
