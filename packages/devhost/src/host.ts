// The devhost: loads a compiled Functions app (Node.js v4 programming model) and plays the Functions host
// for it, in this process. `startDevHost` is what the CLI and the tests call; it runs the start-up phases of
// startup/ in order, each registering how to undo itself: the settings into the environment, the emulators the
// settings point at, the app's registrations, the invoker and durable engine, the triggers, the HTTP server, and
// finally the app's hooks, the engine and the triggers. A phase that fails undoes the ones before it.
import path from "node:path";
import type { ClientPrincipal } from "./auth";
import { RealClock, type Clock, type DurableEngine } from "./durable";
import type { EmulatorAddresses, StartEmulators } from "./emulatorPlan";
import type { LoadedApp } from "./functionsCore";
import { HostLatency } from "./latency/hostLatency";
import { chooseLatency } from "./latency/options";
import type { LatencyProfile, LatencyProfileName } from "./latency/profiles";
import { consoleLogSink, HostLogger, type LogSink } from "./logger";
import { findAppRoot, readHostConfig, type HostConfig } from "./settings";
import { loadRegistrations } from "./startup/appLoad";
import { startApp } from "./startup/appStart";
import { durableApiMessage } from "./startup/durableApi";
import { hostLockMessage, WORKER_READY_MESSAGE } from "./startup/readySignals";
import { connectEmulators } from "./startup/emulators";
import { serveHttp } from "./startup/httpServer";
import { createRuntime, type HostRuntime } from "./startup/runtime";
import { applyAppSettings } from "./startup/appSettings";
import { ShutdownSteps } from "./startup/shutdown";
import { DURABLE_KEY_NAME, loadSystemKey } from "./startup/systemKeys";
import { setUpTriggers, type FunctionSummary, type Triggers } from "./startup/triggers";
import { reportUndeclaredQueues } from "./startup/undeclaredQueues";
import type { ServiceBusTrigger } from "./triggers/serviceBus";
import { restartWorkerOnCrash } from "./startup/workerCrash";
import { HostClock, installDateShim, runInAppTime, TimeSkipper } from "./timeSkipping";

export type { FunctionSummary } from "./startup/triggers";

export const DEFAULT_PORT = 7071;

/** The line that says the host is ready, which launchers wait for (a VS Code task's problem matcher does). */
export function hostStartedMessage(url: string, taskHubName: string, dataDir: string): string {
  return `Host started: ${url} (task hub ${taskHubName}, data ${dataDir})`;
}

export interface DevHostOptions {
  /** The compiled app entry (package.json "main" of the app). */
  appEntry: string;
  /** App settings that win over the settings file and the environment (tests use them). */
  settings?: Record<string, string>;
  /** Settings file; default: local.settings.json next to host.json, else local.settings.sample.json. */
  settingsFile?: string;
  /** Where the durable task hub and timer schedule status live. */
  dataDir: string;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** HTTP port; default the settings file's Host.LocalHttpPort, else 7071; 0 picks a free one. */
  port?: number;
  /**
   * false (default): use the settings as they are. true: start the embedded emulators the settings point
   * at, where nothing listens yet. Addresses: emulators the caller runs; settings pointing at loopback
   * emulators are redirected to them.
   */
  emulators?: boolean | EmulatorAddresses;
  /** How to start emulators when `emulators` is true; default the embedded ones (emulators/index.ts). */
  startEmulators?: StartEmulators;
  /**
   * Time for timers and the durable engine; default the wall clock. With `timeSkipping`, a HostClock to use
   * (one the caller shares with a Service Bus emulator it runs); default a new one.
   */
  clock?: Clock;
  /**
   * Skip time (docs/time-skipping.md): one clock for durable timers, timer triggers, the embedded Service Bus
   * emulator and the time the app's invocations read, which jumps to the next due timer whenever the host is
   * idle. For tests; default false (real time).
   */
  timeSkipping?: boolean;
  /** Where log records go; default the console (information and above). */
  log?: LogSink;
  /** How long stop() lets running invocations finish; default 5 s. */
  shutdownGraceMs?: number;
  /**
   * The principal of every HTTP request that carries no x-ms-client-principal, as if signed in through the
   * platform's authentication (auth.ts); default: the DEVHOST_SIGNED_IN_AS setting, else nobody.
   */
  signedInAs?: ClientPrincipal | null;
  /**
   * Catch what would end the worker (an exception or rejection no invocation caught), fail the invocations in
   * progress and load the app again, as the host restarts its worker. Only for the process's owner (the CLI);
   * default false, so a test runner sees such errors itself.
   */
  restartWorkerOnCrash?: boolean;
  /**
   * Delays each hop as Azure would (docs/latency.md): "none", "azure-storage", "durable-task-scheduler", or a
   * profile of one's own (LATENCY_PROFILES shows the shape). Default: the DEVHOST_LATENCY_PROFILE setting, else none.
   */
  latencyProfile?: LatencyProfileName | LatencyProfile;
  /** Seed of the profile's delays, to replay a run; default: the DEVHOST_LATENCY_SEED setting, else random (logged). */
  latencySeed?: number;
}

export interface DevHost {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  functions: FunctionSummary[];
  engine: DurableEngine;
  /**
   * The durable HTTP API's system key (`durabletask_extension`), which /runtime/webhooks/durabletask/ requires as
   * `code` or `x-functions-key`; kept in the data directory, so the same across restarts on it.
   */
  durableKey: string;
  /**
   * The durableClient input binding's value, as the app's client functions get it: df.getClient on an
   * InvocationContext holding it talks to this host as the app's own durable client does.
   */
  durableClientData(): unknown;
  app: LoadedApp;
  /** The host's time: a HostClock with `timeSkipping`, else the `clock` option or the wall clock. */
  clock: Clock;
  /** Settings in effect (after emulator redirection), for callers that need the connection strings. */
  env: NodeJS.ProcessEnv;
  /** Resolves when no invocation is running right now. */
  whenIdle(timeoutMs?: number): Promise<boolean>;
  /**
   * Stops a Service Bus-triggered function from receiving, as disabling it does in Azure, until `resumeTrigger`:
   * its messages wait in the queue. Tests use it to make a consumer silent without an invocation running.
   */
  pauseTrigger(functionName: string): Promise<void>;
  resumeTrigger(functionName: string): void;
  /** Stops triggers (letting running invocations finish), the engine, the emulators it started; restores env. */
  stop(): Promise<void>;
}

/** The start-up listing, as `func start` prints it. */
export function formatFunctionList(functions: FunctionSummary[]): string {
  const lines = ["Functions:", ""];
  for (const fn of functions) {
    lines.push(`  ${fn.name}: ${fn.description}`);
    if (fn.error) lines.push(`    error: ${fn.error}`);
  }
  return lines.join("\n");
}

export async function startDevHost(options: DevHostOptions): Promise<DevHost> {
  const logger = new HostLogger(options.log ?? consoleLogSink());
  const shutdown = new ShutdownSteps(logger);
  try {
    const appEntry = path.resolve(options.appEntry);
    const appRoot = findAppRoot(appEntry);
    const { localSettings, signedInAs } = applyAppSettings({ ...options, appRoot }, logger, shutdown);
    const skipping = options.timeSkipping ? skippingClock(options.clock) : undefined;
    const clock = skipping ?? options.clock ?? new RealClock();
    const embeddedServiceBus = await connectEmulators(
      { ...options, appRoot, ...(skipping ? { clock: skipping } : {}) },
      logger,
      shutdown,
    );
    // Read after the settings are in the environment: host.json may name settings (%TASK_HUB_NAME%).
    const hostConfig = readHostConfig(appRoot);
    const latency = startLatency(options, hostConfig, clock, logger);
    if (skipping) shutdown.push(installDateShim());
    const { app, registrations, workerHttpUri } = await loadRegistrations(
      appEntry,
      hostConfig,
      logger,
      shutdown,
    );
    const durableKey = loadSystemKey(options.dataDir, DURABLE_KEY_NAME);
    const runtime = createRuntime(
      {
        app,
        registrations,
        hostConfig,
        dataDir: options.dataDir,
        clock,
        durableKey,
        ...(latency ? { latency } : {}),
        ...(skipping ? { appTime: <T>(run: () => T): T => runInAppTime(skipping, run) } : {}),
      },
      logger,
      shutdown,
    );
    const triggers = setUpTriggers(registrations, { runtime, hostConfig, dataDir: options.dataDir, logger });
    if (embeddedServiceBus) {
      const enabled = registrations.filter(
        (r) => !triggers.summaries.find((s) => s.name === r.name)?.disabled,
      );
      await reportUndeclaredQueues(enabled, embeddedServiceBus, appRoot, logger);
    }
    const server = await serveHttp(
      {
        host: options.host ?? "127.0.0.1",
        port: options.port ?? localSettings?.localHttpPort ?? DEFAULT_PORT,
        routePrefix: hostConfig.http.routePrefix,
        registrations,
        triggers,
        runtime,
        signedInAs,
        durableKey,
        ...(workerHttpUri ? { workerHttpUri } : {}),
      },
      logger,
      shutdown,
    );
    await startApp(
      { app, appRoot, runtime, triggers, server, graceMs: options.shutdownGraceMs ?? 5000 },
      shutdown,
    );
    if (skipping) startSkipping(skipping, runtime, logger, shutdown);
    // Pushed last, so it runs first: what still waits a profile's delay goes on, and stopping is not held up.
    if (latency) shutdown.push(() => latency.stop());
    if (options.restartWorkerOnCrash) {
      restartWorkerOnCrash({ app, appRoot, invoker: runtime.invoker }, logger, shutdown);
    }

    logger.info(formatFunctionList(triggers.summaries));
    logger.info(WORKER_READY_MESSAGE);
    const lockMessage = hostLockMessage(process.env);
    if (lockMessage) logger.info(lockMessage);
    logger.info(durableApiMessage(server.url, durableKey));
    logger.info(hostStartedMessage(server.url, runtime.engine.taskHubName, options.dataDir));
    let stopping: Promise<void> | undefined;
    return {
      url: server.url,
      port: server.port,
      functions: triggers.summaries,
      engine: runtime.engine,
      durableKey,
      durableClientData: () => runtime.durableClientData(),
      app,
      clock,
      env: process.env,
      whenIdle: (timeoutMs = 30_000) => runtime.invoker.drain(timeoutMs),
      pauseTrigger: async (name) => serviceBusTriggerNamed(triggers, name).pause(),
      resumeTrigger: (name) => serviceBusTriggerNamed(triggers, name).resume(),
      stop: () => (stopping ??= shutdown.runAll().then(() => logger.info("Host stopped."))),
    };
  } catch (error) {
    await shutdown.runAll();
    throw error;
  }
}

function serviceBusTriggerNamed(triggers: Triggers, name: string): ServiceBusTrigger {
  const trigger = triggers.serviceBus.get(name);
  if (!trigger) {
    const names = [...triggers.serviceBus.keys()].join(", ") || "none";
    throw new Error(`no Service Bus-triggered function named "${name}" (the app has: ${names})`);
  }
  return trigger;
}

/** The clock of a time-skipping host: the caller's HostClock, or a new one. */
function skippingClock(clock: Clock | undefined): HostClock {
  if (clock === undefined) return new HostClock();
  if (clock instanceof HostClock) return clock;
  throw new Error("timeSkipping: the clock option must be a HostClock (or left out)");
}

/**
 * Reports the invoker's and the engine's work to the clock and starts the skipper; both undone on stop (first,
 * so that time stands still while the host shuts down).
 */
function startSkipping(
  clock: HostClock,
  runtime: HostRuntime,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): void {
  const removeProbes = [
    clock.addBusyProbe(() => runtime.invoker.inFlight > 0),
    clock.addBusyProbe(() => runtime.engine.hasWork()),
    // A latency profile's cold starts and Service Bus delivery delays are timers on this clock: not busy.
  ];
  const skipper = new TimeSkipper(clock, {
    onSkip: (from, to) =>
      logger.write({
        level: "debug",
        category: "system",
        message: `Time-skipping: idle, clock moved ${to - from} ms ahead to ${new Date(to).toISOString()}`,
      }),
  });
  skipper.start();
  shutdown.push(() => {
    skipper.stop();
    removeProbes.forEach((remove) => remove());
  });
}

/** The latency profile of the options or settings (docs/latency.md), or undefined for none. */
function startLatency(
  options: DevHostOptions,
  hostConfig: HostConfig,
  clock: Clock,
  logger: HostLogger,
): HostLatency | undefined {
  const choice = chooseLatency(options);
  if (!choice) return undefined;
  const { maxQueuePollingIntervalMs, partitionCount } = hostConfig.durableTask;
  return new HostLatency({
    choice,
    clock,
    logger,
    ...(maxQueuePollingIntervalMs !== undefined ? { maxQueuePollingIntervalMs } : {}),
    ...(partitionCount !== undefined ? { partitionCount } : {}),
  });
}
