// A latency profile at work in a running host: the hooks the hop sites call. Durable hops are handed to the
// engine as delays it schedules on its clock (a VirtualClock skips them like any durable timer); Service Bus
// delivery and cold starts of the other groups happen inside invocations, so they wait real time, and stop()
// releases whatever still waits so that shutdown is not held up.
import type { Clock } from "../durable/clock";
import type { HopDelay } from "../durable/types";
import type { Registration } from "../functionsCore";
import type { InvocationResult, InvokeRequest } from "../invocation";
import type { HostLogger } from "../logger";
import { LatencyModel, scaleGroup } from "./delays";
import type { LatencyChoice } from "./options";
import { LATENCY_SEED_SETTING } from "./options";

type Invoke = (registration: Registration, request: InvokeRequest) => Promise<InvocationResult>;

export interface HostLatencyOptions {
  choice: LatencyChoice;
  clock: Clock;
  logger: HostLogger;
  maxQueuePollingIntervalMs?: number;
  partitionCount?: number;
}

export class HostLatency {
  readonly model: LatencyModel;
  readonly #clock: Clock;
  readonly #waiting = new Set<() => void>();
  #stopped = false;

  constructor(options: HostLatencyOptions) {
    const { choice, clock, logger } = options;
    this.#clock = clock;
    this.model = new LatencyModel({
      profile: choice.profile,
      seed: choice.seed,
      ...(options.maxQueuePollingIntervalMs !== undefined
        ? { maxQueuePollingIntervalMs: options.maxQueuePollingIntervalMs }
        : {}),
      ...(options.partitionCount !== undefined ? { partitionCount: options.partitionCount } : {}),
      startAt: clock.now().getTime(),
      log: (message) => logger.write({ level: "debug", category: "host", message }),
    });
    logger.info(describeChoice(choice, this.model));
  }

  /** The engine's hook (DurableEngineOptions.hopDelay). */
  readonly hopDelay: HopDelay = (hop, target, now) => this.model.durableHop(hop, target, now.getTime());

  /** Before a received Service Bus message goes to its function. */
  serviceBusDelivery(functionName: string): Promise<void> {
    return this.#wait(this.model.serviceBusDelivery(functionName));
  }

  /** Invocations of HTTP, timer and Service Bus functions pay their group's cold start, and keep it warm. */
  invokeWith(invoke: Invoke): Invoke {
    return async (registration, request) => {
      const group = scaleGroup(registration.name, registration.trigger.type);
      await this.#wait(this.model.coldStart(group, this.#now()));
      this.model.active(group, this.#now());
      try {
        return await invoke(registration, request);
      } finally {
        this.model.active(group, this.#now());
      }
    };
  }

  /** A durable invocation keeps the durable group warm (its cold start is part of the hop, hopDelay). */
  durableActive(): void {
    this.model.active("durable", this.#now());
  }

  /** Releases every wait in progress, and makes later ones return at once. */
  stop(): void {
    this.#stopped = true;
    for (const release of [...this.#waiting]) release();
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  // On the host's clock, like the durable hops: real time on the wall clock, and on a time-skipping host's virtual
  // clock a delay that passes when the host is otherwise idle, so a step's deadline can come due during a cold
  // start, as it can in Azure, instead of time standing still while the host waits.
  #wait(ms: number): Promise<void> {
    if (ms <= 0 || this.#stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const release = (): void => {
        timer.cancel();
        this.#waiting.delete(release);
        resolve();
      };
      const timer = this.#clock.setTimer(new Date(this.#now() + ms), release);
      this.#waiting.add(release);
    });
  }
}

function describeChoice(choice: LatencyChoice, model: LatencyModel): string {
  const { profile, seed, seedFrom } = choice;
  const [sbMin, sbMax] = profile.serviceBusDeliveryMs;
  const durable =
    profile.durable.kind === "queue-polling"
      ? `durable queues polled with back-off up to ${duration(model.maxQueuePollingIntervalMs)} ` +
        `over ${model.partitionCount} control queue(s)`
      : `durable work pushed in ${profile.durable.orchestratorMessageMs.join("-")} ms`;
  const cold = profile.coldStart
    ? `cold start after ${duration(profile.coldStart.idleAfterMs)} idle`
    : "no cold starts";
  const from =
    seedFrom === "random"
      ? `random; replay with --latency-seed ${seed} or ${LATENCY_SEED_SETTING}=${seed}`
      : `from the ${seedFrom}`;
  return (
    `Latency profile ${profile.name} (seed ${seed}, ${from}): Service Bus delivery ${sbMin}-${sbMax} ms, ` +
    `${durable}, ${cold}.`
  );
}

function duration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}
