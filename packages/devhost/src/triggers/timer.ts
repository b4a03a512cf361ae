// Timer triggers as the host runs them: the NCRONTAB schedule (after %NAME% resolution), runOnStartup, and
// the schedule monitor that remembers the last and next occurrence (in the data directory, where Azure uses
// the storage account) so that an occurrence missed while the app was down runs at start-up with
// isPastDue = true. Invocations of one timer never overlap: the next occurrence is armed when one finishes.
import fs from "node:fs";
import path from "node:path";
import type { Clock, TimerHandle } from "../durable/clock";
import type { Registration, RpcTypedData } from "../functionsCore";
import type { InvocationResult, InvokeRequest } from "../invocation";
import type { HostLogger } from "../logger";
import { parseSchedule, shortestInterval, type Schedule } from "./ncrontab";

interface ScheduleStatus {
  last: string;
  next: string;
  lastUpdated: string;
}

/** .NET's DateTime.MinValue, which the host reports as `Last` before the first recorded run. */
const NEVER = "0001-01-01T00:00:00+00:00";

function hostDate(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+00:00");
}

export interface TimerTriggerOptions {
  registration: Registration;
  schedule: Schedule;
  runOnStartup: boolean;
  useMonitor: boolean;
  /** Folder for the schedule monitor's status files. */
  statusDir: string;
  clock: Clock;
  invoke: (registration: Registration, request: InvokeRequest) => Promise<InvocationResult>;
  logger: HostLogger;
}

export interface TimerRetryOptions {
  strategy: "fixedDelay" | "exponentialBackoff";
  maxRetryCount: number;
  delayMs: number;
  minimumMs: number;
  maximumMs: number;
}

function durationMs(value: unknown): number {
  const seconds = (value as { seconds?: unknown } | undefined)?.seconds;
  return typeof seconds === "number" ? seconds * 1000 : Number(seconds ?? 0) * 1000;
}

/** The function-level `retry` option of @azure/functions, as the worker passes it in retryOptions. */
export function readRetryOptions(registration: Registration): TimerRetryOptions | undefined {
  const raw = registration.metadata.retryOptions as Record<string, unknown> | undefined | null;
  if (!raw) return undefined;
  const strategy = raw.retryStrategy === "exponentialBackoff" ? "exponentialBackoff" : "fixedDelay";
  return {
    strategy,
    maxRetryCount: Number(raw.maxRetryCount ?? 0),
    delayMs: durationMs(raw.delayInterval),
    minimumMs: durationMs(raw.minimumInterval),
    maximumMs: durationMs(raw.maximumInterval),
  };
}

export class TimerTrigger {
  readonly #options: TimerTriggerOptions;
  readonly #statusFile: string;
  readonly #retry: TimerRetryOptions | undefined;
  #timer: TimerHandle | undefined;
  #stopped = false;
  #status: ScheduleStatus | undefined;
  #wakeUp: (() => void) | undefined;
  #firing: Promise<void> | undefined;
  /** The attempt running now; an occurrence between attempts waits on the clock and is not "running". */
  #attempt: Promise<unknown> | undefined;
  /** Set while an occurrence waits on the clock for its next retry. */
  #retryWait: Promise<void> | undefined;

  constructor(options: TimerTriggerOptions) {
    this.#options = options;
    this.#statusFile = path.join(options.statusDir, `${options.registration.name}.json`);
    this.#retry = readRetryOptions(options.registration);
  }

  /** Reads the trigger's binding: schedule (with %NAME% already resolved by the caller), runOnStartup, useMonitor. */
  static describe(
    registration: Registration,
    resolvedSchedule: string,
  ): { schedule: Schedule; useMonitor: boolean } {
    const schedule = parseSchedule(resolvedSchedule);
    const explicit = registration.trigger.useMonitor;
    const useMonitor =
      typeof explicit === "boolean" ? explicit : shortestInterval(schedule, new Date()) >= 60_000;
    return { schedule, useMonitor };
  }

  start(): void {
    const { clock, runOnStartup, useMonitor } = this.#options;
    this.#status = useMonitor ? this.#readStatus() : undefined;
    const now = clock.now().getTime();
    if (runOnStartup) {
      this.#fire(now, false, "Timer fired at startup (runOnStartup)");
      return;
    }
    const missed = this.#status && Date.parse(this.#status.next) < now;
    if (missed) {
      this.#options.logger.info(
        `Function '${this.#options.registration.name}' is past due on startup. Executing now.`,
      );
      this.#fire(now, true, `IsPastDue`);
      return;
    }
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#wakeUp?.();
  }

  /** Waits on the trigger's clock; stop() ends the wait early. */
  #wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const clock = this.#options.clock;
      const handle = clock.setTimer(new Date(clock.now().getTime() + ms), () => {
        this.#wakeUp = undefined;
        resolve();
      });
      this.#wakeUp = () => {
        handle.cancel();
        this.#wakeUp = undefined;
        resolve();
      };
    });
  }

  /** The function this timer runs. */
  get name(): string {
    return this.#options.registration.name;
  }

  /** When the next occurrence is due (ms), for listings and tests. */
  nextOccurrence(): number {
    return this.#options.schedule.next(this.#options.clock.now()).getTime();
  }

  #arm(): void {
    if (this.#stopped) return;
    const due = this.nextOccurrence();
    this.#timer = this.#options.clock.setTimer(new Date(due), () => {
      this.#timer = undefined;
      this.#fire(due, false, `Timer fired at ${hostDate(this.#options.clock.now().getTime())}`);
    });
  }

  #fire(due: number, isPastDue: boolean, reason: string): void {
    if (this.#stopped) return;
    const firing = this.#invokeWithRetries(due, isPastDue, reason).finally(() => {
      if (this.#firing === firing) this.#firing = undefined;
      this.#arm();
    });
    this.#firing = firing;
  }

  /**
   * Resolves once no attempt is running: the occurrence is done (and the next one armed), or it waits on the
   * clock for a retry. A virtual clock waits on this, so one advance() plays what is due at that time, and the
   * next advance() the retry it scheduled.
   */
  async idle(): Promise<void> {
    for (;;) {
      const busy = this.#attempt ?? (this.#retryWait ? undefined : this.#firing);
      if (!busy) return;
      await busy.catch(() => undefined);
    }
  }

  async #invokeWithRetries(due: number, isPastDue: boolean, reason: string): Promise<void> {
    const { schedule, clock } = this.#options;
    const previous = this.#status;
    const payload = {
      Schedule: { AdjustForDST: true },
      ScheduleStatus: this.#options.useMonitor
        ? {
            Last: previous?.last ?? NEVER,
            Next: hostDate(due),
            LastUpdated: previous?.lastUpdated ?? hostDate(clock.now().getTime()),
          }
        : null,
      IsPastDue: isPastDue,
    };
    const triggerData: RpcTypedData = { json: JSON.stringify(payload) };
    await this.#invokeUnderRetryPolicy(triggerData, reason);
    if (this.#options.useMonitor) {
      this.#status = {
        last: hostDate(due),
        next: hostDate(schedule.next(new Date(Math.max(due, clock.now().getTime()))).getTime()),
        lastUpdated: hostDate(clock.now().getTime()),
      };
      this.#writeStatus(this.#status);
    }
  }

  /**
   * Runs the function now, not past due, as func start's admin endpoint does: under the function's retry policy,
   * like any other execution of it, and without moving the schedule.
   */
  async runNow(reason: string): Promise<InvocationResult> {
    const triggerData: RpcTypedData = {
      json: JSON.stringify({ Schedule: { AdjustForDST: true }, ScheduleStatus: null, IsPastDue: false }),
    };
    return this.#invokeUnderRetryPolicy(triggerData, reason);
  }

  /**
   * One execution under the function's retry policy, as the WebJobs host runs it: with a policy, every attempt,
   * the first included, carries a retry context (retryCount 0 first, then 1, 2, ...), so a function can tell
   * its last attempt; after a failure the next attempt waits the policy's delay, up to maxRetryCount retries (-1:
   * retry forever). Without a policy there is one attempt and no retry context.
   */
  async #invokeUnderRetryPolicy(triggerData: RpcTypedData, reason: string): Promise<InvocationResult> {
    const { registration } = this.#options;
    const invoke = (request: InvokeRequest): Promise<InvocationResult> => {
      const attempt = this.#options.invoke(registration, request);
      this.#attempt = attempt;
      void attempt.finally(() => {
        if (this.#attempt === attempt) this.#attempt = undefined;
      });
      return attempt;
    };
    const retry = this.#retry;
    if (!retry) return invoke({ triggerData, reason });
    let result: InvocationResult | undefined;
    for (let retryCount = 0; ; retryCount++) {
      result = await invoke({
        triggerData,
        reason,
        retryContext: {
          retryCount,
          maxRetryCount: retry.maxRetryCount,
          ...(result?.error ? { exception: { message: result.error.message } } : {}),
        },
      });
      if (result.succeeded || this.#stopped) return result;
      if (retry.maxRetryCount >= 0 && retryCount >= retry.maxRetryCount) return result;
      const attempt = retryCount + 1;
      const delay =
        retry.strategy === "fixedDelay"
          ? retry.delayMs
          : Math.min(retry.maximumMs, Math.max(retry.minimumMs, retry.minimumMs * 2 ** (attempt - 1)));
      this.#retryWait = this.#wait(delay);
      await this.#retryWait;
      this.#retryWait = undefined;
      if (this.#stopped) return result;
    }
  }

  #readStatus(): ScheduleStatus | undefined {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.#statusFile, "utf8")) as Partial<ScheduleStatus>;
      if (
        typeof parsed.last === "string" &&
        typeof parsed.next === "string" &&
        typeof parsed.lastUpdated === "string"
      ) {
        return { last: parsed.last, next: parsed.next, lastUpdated: parsed.lastUpdated };
      }
    } catch {
      // No record yet (first run) or an unreadable one: start fresh, as the host does.
    }
    return undefined;
  }

  #writeStatus(status: ScheduleStatus): void {
    try {
      fs.mkdirSync(path.dirname(this.#statusFile), { recursive: true });
      const temporary = `${this.#statusFile}.tmp`;
      fs.writeFileSync(temporary, JSON.stringify(status, null, 2));
      fs.renameSync(temporary, this.#statusFile);
    } catch (error) {
      this.#options.logger.warn(
        `Could not record the schedule status of ${this.#options.registration.name}: ${(error as Error).message}`,
      );
    }
  }
}
