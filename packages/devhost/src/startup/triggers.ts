// Start-up phase 5: one trigger per function, by its trigger type. Durable functions go to the engine, HTTP ones
// to the server's routes, timers and Service Bus receivers are created here and started last. A function whose
// trigger cannot be set up is listed with its error and stays off; the others still run, as in the host. A function
// disabled by app setting (disabledFunctions.ts) is set up but not started: its HTTP route answers 404, and its
// timer or receiver never runs. The warmup function runs once when the app starts (triggers/warmup.ts).
import path from "node:path";
import type { Registration } from "../functionsCore";
import type { HostLogger } from "../logger";
import { resolveAppSettingExpressions, resolveConnectionString, type HostConfig } from "../settings";
import { toHttpFunction, type HttpFunction } from "../triggers/http";
import { entityLabel, ServiceBusTrigger, triggerEntity } from "../triggers/serviceBus";
import { TimerTrigger } from "../triggers/timer";
import { isWarmupFunction, isWarmupTrigger, WARMUP_FUNCTION_NAME, WarmupTrigger } from "../triggers/warmup";
import { isFunctionDisabled, unreadDisabledSettings } from "./disabledFunctions";
import type { HostRuntime } from "./runtime";

export interface FunctionSummary {
  name: string;
  /** Trigger binding type, e.g. httpTrigger, timerTrigger, serviceBusTrigger, orchestrationTrigger. */
  trigger: string;
  /** What the listing prints after the name: methods and URL, queue, schedule. */
  description: string;
  /** Set when the function could not be started (it stays off, as in the Functions host). */
  error?: string;
  /** Set when an AzureWebJobs.<name>.Disabled setting disables it. */
  disabled?: true;
}

/** A trigger that listens on its own once started: a timer or a Service Bus receiver. */
interface Listener {
  start(): void;
  stop(graceMs: number): Promise<void> | void;
}

export interface Triggers {
  summaries: FunctionSummary[];
  httpFunctions: HttpFunction[];
  timers: TimerTrigger[];
  /** The Service Bus triggers by function name (enabled ones). */
  serviceBus: Map<string, ServiceBusTrigger>;
  /** The app's warmup function, unless it has none or it is disabled. */
  warmup?: WarmupTrigger;
  /** Starts the timers and receivers. */
  start(): void;
  /** Stops them, letting running invocations finish for up to `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

export interface TriggerContext {
  runtime: HostRuntime;
  hostConfig: HostConfig;
  dataDir: string;
  logger: HostLogger;
}

const DURABLE_TRIGGERS: Record<string, "orchestration" | "activity" | "entity"> = {
  orchestrationtrigger: "orchestration",
  activitytrigger: "activity",
  entitytrigger: "entity",
};

/** What setting up the triggers collects: the HTTP routes, and the listeners to start. */
interface Collected {
  httpFunctions: HttpFunction[];
  timers: TimerTrigger[];
  serviceBus: Map<string, ServiceBusTrigger>;
  listeners: Listener[];
  warmup?: WarmupTrigger;
}

export function setUpTriggers(registrations: readonly Registration[], context: TriggerContext): Triggers {
  const summaries: FunctionSummary[] = [];
  const collected: Collected = { httpFunctions: [], timers: [], serviceBus: new Map(), listeners: [] };
  for (const registration of registrations) {
    const type = registration.trigger.type;
    const summary: FunctionSummary = { name: registration.name, trigger: type, description: type };
    summaries.push(summary);
    if (isFunctionDisabled(registration.name)) {
      summary.disabled = true;
      // The WebJobs SDK's line for a function it creates no listener for (HostListenerFactory).
      context.logger.info(`Function '${registration.name}' is disabled`);
    }
    try {
      warnOfUnsupportedBindings(registration, context);
      setUpTrigger(registration, summary, context, collected);
    } catch (error) {
      summary.error = (error as Error).message;
      context.logger.error(`The '${registration.name}' function is in error: ${summary.error}`);
    }
  }
  unreadDisabledSettings(registrations.map((r) => r.name)).forEach((warning) => context.logger.warn(warning));
  const { httpFunctions, timers, serviceBus, listeners, warmup } = collected;
  return {
    summaries,
    httpFunctions,
    timers,
    serviceBus,
    ...(warmup ? { warmup } : {}),
    start: () => listeners.forEach((listener) => listener.start()),
    stop: async (graceMs) => {
      await Promise.all(listeners.map((listener) => listener.stop(graceMs)));
    },
  };
}

function warnOfUnsupportedBindings(registration: Registration, { runtime, logger }: TriggerContext): void {
  const unsupported = runtime.invoker.unsupportedBindings(registration);
  if (unsupported.length > 0) {
    logger.warn(
      `${registration.name}: the devhost does not emulate the ${unsupported.join(", ")} binding(s).`,
    );
  }
}

/** Sets up one function's trigger: registered with the engine, an HTTP route, or a listener. */
function setUpTrigger(
  registration: Registration,
  summary: FunctionSummary,
  context: TriggerContext,
  collected: Collected,
): void {
  const type = registration.trigger.type.toLowerCase();
  const enabled = summary.disabled !== true;
  const durableKind = DURABLE_TRIGGERS[type];
  if (durableKind) {
    // Disabling is not applied to durable functions: the engine runs every orchestration, activity and entity.
    context.runtime.engine.register({
      name: registration.name,
      kind: durableKind,
      handler: registration.handler,
    });
  } else if (type === "httptrigger") {
    const route = toHttpFunction(registration, context.hostConfig.http.routePrefix);
    collected.httpFunctions.push(enabled ? route : { ...route, disabled: true });
  } else if (type === "timertrigger") {
    const timer = timerTrigger(registration, summary, context);
    // Kept for the admin API, which runs disabled functions as the host's does with the master key.
    collected.timers.push(timer);
    if (enabled) collected.listeners.push(timer);
  } else if (type === "servicebustrigger") {
    const trigger = serviceBusTrigger(registration, summary, context);
    if (enabled) {
      collected.serviceBus.set(registration.name, trigger);
      collected.listeners.push(trigger);
    }
  } else if (isWarmupTrigger(registration)) {
    setUpWarmup(registration, enabled, context, collected);
  } else {
    throw new Error(`the devhost has no ${registration.trigger.type} trigger`);
  }
}

function setUpWarmup(
  registration: Registration,
  enabled: boolean,
  context: TriggerContext,
  collected: Collected,
): void {
  if (!isWarmupFunction(registration)) {
    // The host maps only the function named "warmup" to admin/warmup; any other warmup trigger never runs.
    context.logger.warn(
      `${registration.name}: a warmup trigger runs only in the function named '${WARMUP_FUNCTION_NAME}', as in ` +
        `the host; this one never runs.`,
    );
    return;
  }
  if (enabled) collected.warmup = new WarmupTrigger({ registration, invoke: context.runtime.invoke });
}

function timerTrigger(
  registration: Registration,
  summary: FunctionSummary,
  context: TriggerContext,
): TimerTrigger {
  const raw = registration.trigger.schedule;
  if (typeof raw !== "string") throw new Error("the timer trigger has no schedule");
  const resolved = resolveAppSettingExpressions(raw, `Function ${registration.name} schedule`);
  const { schedule, useMonitor } = TimerTrigger.describe(registration, resolved);
  summary.description = `timerTrigger (${resolved})`;
  return new TimerTrigger({
    registration,
    schedule,
    useMonitor,
    runOnStartup: registration.trigger.runOnStartup === true,
    statusDir: path.join(context.dataDir, "timers"),
    clock: context.runtime.clock,
    invoke: context.runtime.invoke,
    logger: context.logger,
  });
}

function serviceBusTrigger(
  registration: Registration,
  summary: FunctionSummary,
  { runtime, hostConfig, logger }: TriggerContext,
): ServiceBusTrigger {
  const entity = triggerEntity(registration);
  const connection =
    typeof registration.trigger.connection === "string" ? registration.trigger.connection : undefined;
  const connectionString = resolveConnectionString(connection, "ServiceBus", registration.name);
  if (registration.trigger.isSessionsEnabled === true) {
    throw new Error("session-enabled Service Bus triggers are not supported by the devhost");
  }
  const batched = registration.trigger.cardinality === "many";
  if (!hostConfig.serviceBus.autoCompleteMessages) {
    logger.warn(
      `${registration.name}: host.json sets autoCompleteMessages to false; Node.js functions cannot settle ` +
        `messages themselves, so every message returns to the queue when its lock expires.`,
    );
  }
  summary.description = `serviceBusTrigger (${entityLabel(entity)}${batched ? ", batches" : ""})`;
  const latency = runtime.latency;
  return new ServiceBusTrigger({
    registration,
    connectionString,
    entity,
    maxConcurrentCalls: hostConfig.serviceBus.maxConcurrentCalls,
    autoCompleteMessages: hostConfig.serviceBus.autoCompleteMessages,
    maxAutoLockRenewalMs: hostConfig.serviceBus.maxAutoLockRenewalMs,
    ...(batched ? { maxMessageBatchSize: hostConfig.serviceBus.maxMessageBatchSize } : {}),
    clients: runtime.clients,
    invoke: runtime.invoke,
    logger,
    ...(latency ? { deliveryDelay: () => latency.serviceBusDelivery(registration.name) } : {}),
  });
}
