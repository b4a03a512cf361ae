// The devhost: loads a compiled Functions app (Node.js v4 programming model) and plays the Functions host
// for it, in this process: settings into the environment, the app's registrations captured through the
// @azure/functions-core stand-in, HTTP, timer and Service Bus triggers, the durable task engine for
// orchestrations, activities and entities, the durableClient input and serviceBus output bindings, and the
// embedded emulators when the settings point at them. `startDevHost` is what the CLI and the tests call.
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { DurableEngine, RealClock, VirtualClock, type Clock } from "./durable";
import {
  findProgrammingModel,
  loadApp,
  setSystemLogSink,
  unloadApp,
  type LoadedApp,
  type Registration,
} from "./functionsCore";
import { encodeClientPrincipal, parseSignedInAs, type ClientPrincipal } from "./auth";
import { Invoker } from "./invocation";
import {
  planEmulators,
  settingsForEmulators,
  type EmulatorAddresses,
  type StartEmulators,
} from "./emulatorPlan";
import { consoleLogSink, HostLogger, type LogSink } from "./logger";
import {
  applySettingsToEnv,
  findAppRoot,
  findLocalSettingsFile,
  readHostConfig,
  readLocalSettings,
  resolveAppSettingExpressions,
  resolveConnectionString,
} from "./settings";
import { startHttpServer, toHttpFunction, type HttpFunction, type RunningHttpServer } from "./triggers/http";
import {
  entityLabel,
  serviceBusOutput,
  ServiceBusClients,
  ServiceBusTrigger,
  triggerEntity,
} from "./triggers/serviceBus";
import { TimerTrigger } from "./triggers/timer";

export const DEFAULT_PORT = 7071;

/** The embedded emulators, loaded only when an app needs them: --no-emulators never loads rhea. */
const startEmbeddedEmulators: StartEmulators = async (request) => {
  const { startEmulators } = await import("./emulators/index.js");
  return startEmulators(request);
};
const DURABLE_TRIGGERS: Record<string, "orchestration" | "activity" | "entity"> = {
  orchestrationtrigger: "orchestration",
  activitytrigger: "activity",
  entitytrigger: "entity",
};

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
  /** Time for timers and the durable engine; default the wall clock. */
  clock?: Clock;
  /** Where log records go; default the console (information and above). */
  log?: LogSink;
  /** How long stop() lets running invocations finish; default 5 s. */
  shutdownGraceMs?: number;
  /**
   * The principal of every HTTP request that carries no x-ms-client-principal, as if signed in through the
   * platform's authentication (auth.ts); default: the DEVHOST_SIGNED_IN_AS setting, else nobody.
   */
  signedInAs?: ClientPrincipal | null;
}

export interface FunctionSummary {
  name: string;
  /** Trigger binding type, e.g. httpTrigger, timerTrigger, serviceBusTrigger, orchestrationTrigger. */
  trigger: string;
  /** What the listing prints after the name: methods and URL, queue, schedule. */
  description: string;
  /** Set when the function could not be started (it stays off, as in the Functions host). */
  error?: string;
}

export interface DevHost {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  functions: FunctionSummary[];
  engine: DurableEngine;
  app: LoadedApp;
  /** Settings in effect (after emulator redirection), for callers that need the connection strings. */
  env: NodeJS.ProcessEnv;
  /** Resolves when no invocation is running right now. */
  whenIdle(timeoutMs?: number): Promise<boolean>;
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

function describeHttp(fn: HttpFunction, url: string): string {
  const methods = fn.methods ? `[${[...fn.methods].join(",")}]` : "[ALL]";
  return `${methods} ${url}${fn.displayRoute}`;
}

export async function startDevHost(options: DevHostOptions): Promise<DevHost> {
  const logger = new HostLogger(options.log ?? consoleLogSink());
  const cleanups: (() => Promise<void> | void)[] = [];
  const runCleanups = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.warn(`Shutdown step failed: ${(error as Error).message}`);
      }
    }
  };

  try {
    const appEntry = path.resolve(options.appEntry);
    const appRoot = findAppRoot(appEntry);

    // 1. Settings, as func start applies them: file values under existing variables, explicit ones on top.
    const settingsFile = options.settingsFile
      ? path.resolve(options.settingsFile)
      : findLocalSettingsFile(appRoot);
    const localSettings = settingsFile ? readLocalSettings(settingsFile) : undefined;
    const fileValues = localSettings?.values ?? {};
    logger.info(
      settingsFile ? `Settings: ${settingsFile}` : `Settings: no local.settings.json in ${appRoot}`,
    );
    cleanups.push(applySettingsToEnv(fileValues, options.settings ?? {}));
    const signedInAs =
      options.signedInAs !== undefined
        ? options.signedInAs
        : process.env.DEVHOST_SIGNED_IN_AS
          ? parseSignedInAs(process.env.DEVHOST_SIGNED_IN_AS)
          : null;
    if (signedInAs) {
      logger.info(
        `Requests without x-ms-client-principal act as ${signedInAs.name} (${signedInAs.roles.join(", ") || "no roles"})`,
      );
    }

    // 2. Emulators the settings point at.
    if (options.emulators === true) {
      const plan = await planEmulators(process.env, appRoot);
      plan.notes.forEach((note) => logger.info(note));
      if (plan.request.serviceBus || plan.request.cosmos) {
        const handles = await (options.startEmulators ?? startEmbeddedEmulators)({
          ...plan.request,
          log: (line) => logger.write({ level: "debug", category: "system", message: line }),
        });
        cleanups.push(() => handles.stop());
        cleanups.push(applySettingsToEnv({}, settingsForEmulators(handles)));
      }
    } else if (options.emulators && typeof options.emulators === "object") {
      cleanups.push(applySettingsToEnv({}, settingsForEmulators(options.emulators)));
    }

    const hostConfig = readHostConfig(appRoot);

    // 3. The app's registrations.
    setSystemLogSink((level, message) =>
      logger.write({ level: level === "none" ? "trace" : level, category: "system", message }),
    );
    logger.info(`Loading ${appEntry}`);
    const app = await loadApp(appEntry);
    cleanups.push(() => unloadApp(app));
    if (app.functions.size === 0) {
      logger.warn(
        `No functions found in ${appEntry}: it registered nothing through @azure/functions (v4 model).`,
      );
    }
    // The worker asks the programming model for its capabilities once the entry has loaded; that also locks
    // app.setup(). HTTP streaming would need the worker's HTTP proxy protocol, which the devhost does not speak.
    const capabilities = (await findProgrammingModel()?.getCapabilities?.({})) ?? {};
    if (capabilities.HttpUri) {
      throw new Error(
        "The app enables HTTP streaming (app.setup({ enableHttpStream: true })), which the devhost does not support.",
      );
    }
    const registrations = [...app.functions.values()].filter(
      (r) =>
        !hostConfig.functions || hostConfig.functions.some((n) => n.toLowerCase() === r.name.toLowerCase()),
    );

    // 4. Engine, bindings, invoker.
    const clock = options.clock ?? new RealClock();
    fs.mkdirSync(options.dataDir, { recursive: true });
    const byName = new Map(registrations.map((r) => [r.name, r]));
    const engine: DurableEngine = new DurableEngine({
      dataDir: options.dataDir,
      ...(hostConfig.durableTask.hubName ? { taskHubName: hostConfig.durableTask.hubName } : {}),
      ...(hostConfig.durableTask.maxConcurrentActivityFunctions
        ? { maxConcurrentActivities: hostConfig.durableTask.maxConcurrentActivityFunctions }
        : {}),
      clock,
      log: (line) => logger.write({ level: "information", category: "system", message: line }),
      // Durable work goes through the invoker too, for hooks and the Executing/Executed lines. The engine
      // invokes nothing before start(), by which time `invoker` below exists.
      invoke: (reg, input, context): Promise<unknown> => {
        const registration = byName.get(reg.name);
        if (!registration) return Promise.resolve(reg.handler(input, context));
        return invoker.invokeDirect(registration, context, [input], `${reg.kind} work item`);
      },
    });
    const clients = new ServiceBusClients();
    cleanups.push(() => clients.close());
    let baseUrl = "";
    const invoker: Invoker = new Invoker({
      app,
      logger,
      inputs: {
        durableClient: () => ({ string: JSON.stringify(engine.clientBindingData(baseUrl)) }),
        orchestrationClient: () => ({ string: JSON.stringify(engine.clientBindingData(baseUrl)) }),
      },
      outputs: { serviceBus: serviceBusOutput(clients) },
    });
    const invoke = invoker.invoke.bind(invoker);

    const summaries: FunctionSummary[] = [];
    const httpFunctions: HttpFunction[] = [];
    const starters: (() => void)[] = [];
    const stoppers: ((graceMs: number) => Promise<void> | void)[] = [];
    const timers: TimerTrigger[] = [];
    for (const registration of registrations) {
      const type = registration.trigger.type;
      const summary: FunctionSummary = { name: registration.name, trigger: type, description: type };
      summaries.push(summary);
      try {
        const unsupported = invoker.unsupportedBindings(registration);
        if (unsupported.length > 0) {
          logger.warn(
            `${registration.name}: the devhost does not emulate the ${unsupported.join(", ")} binding(s).`,
          );
        }
        setUpTrigger(registration, summary);
      } catch (error) {
        summary.error = (error as Error).message;
        logger.error(`The '${registration.name}' function is in error: ${summary.error}`);
      }
    }

    function setUpTrigger(registration: Registration, summary: FunctionSummary): void {
      const type = registration.trigger.type.toLowerCase();
      const durableKind = DURABLE_TRIGGERS[type];
      if (durableKind) {
        engine.register({ name: registration.name, kind: durableKind, handler: registration.handler });
        return;
      }
      if (type === "httptrigger") {
        httpFunctions.push(toHttpFunction(registration, hostConfig.http.routePrefix));
        return;
      }
      if (type === "timertrigger") {
        const raw = registration.trigger.schedule;
        if (typeof raw !== "string") throw new Error("the timer trigger has no schedule");
        const resolved = resolveAppSettingExpressions(raw, `Function ${registration.name} schedule`);
        const { schedule, useMonitor } = TimerTrigger.describe(registration, resolved);
        summary.description = `timerTrigger (${resolved})`;
        const timer = new TimerTrigger({
          registration,
          schedule,
          useMonitor,
          runOnStartup: registration.trigger.runOnStartup === true,
          statusDir: path.join(options.dataDir, "timers"),
          clock,
          invoke,
          logger,
        });
        starters.push(() => timer.start());
        stoppers.push(() => timer.stop());
        timers.push(timer);
        return;
      }
      if (type === "servicebustrigger") {
        const entity = triggerEntity(registration);
        const connection =
          typeof registration.trigger.connection === "string" ? registration.trigger.connection : undefined;
        const connectionString = resolveConnectionString(connection, "ServiceBus", registration.name);
        if (registration.trigger.isSessionsEnabled === true) {
          throw new Error("session-enabled Service Bus triggers are not supported by the devhost");
        }
        if (registration.trigger.cardinality === "many") {
          throw new Error(
            'batched Service Bus triggers (cardinality "many") are not supported by the devhost',
          );
        }
        if (!hostConfig.serviceBus.autoCompleteMessages) {
          logger.warn(
            `${registration.name}: host.json sets autoCompleteMessages to false; Node.js functions cannot settle ` +
              `messages themselves, so every message returns to the queue when its lock expires.`,
          );
        }
        summary.description = `serviceBusTrigger (${entityLabel(entity)})`;
        const trigger = new ServiceBusTrigger({
          registration,
          connectionString,
          entity,
          maxConcurrentCalls: hostConfig.serviceBus.maxConcurrentCalls,
          autoCompleteMessages: hostConfig.serviceBus.autoCompleteMessages,
          maxAutoLockRenewalMs: hostConfig.serviceBus.maxAutoLockRenewalMs,
          clients,
          invoke,
          logger,
        });
        starters.push(() => trigger.start());
        stoppers.push((graceMs) => trigger.stop(graceMs));
        return;
      }
      throw new Error(`the devhost has no ${registration.trigger.type} trigger`);
    }

    // func start's admin API: POST /admin/functions/<name> {"input": "..."} runs a non-HTTP function now.
    const adminInvoke = async (req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> => {
      const name = decodeURIComponent(rest.split("?")[0] ?? "");
      const registration = registrations.find((r) => r.name.toLowerCase() === name.toLowerCase());
      const type = registration?.trigger.type.toLowerCase();
      if (req.method !== "POST") {
        res.writeHead(405, { allow: "POST" }).end();
        return;
      }
      if (!registration || !type) {
        res.writeHead(404).end();
        return;
      }
      if (type !== "timertrigger" && type !== "servicebustrigger") {
        res
          .writeHead(400, { "content-type": "text/plain" })
          .end(`${registration.name} (${type}) cannot be run this way.`);
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let input = "";
      try {
        const body =
          chunks.length > 0
            ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input?: unknown })
            : {};
        input = typeof body.input === "string" ? body.input : "";
      } catch {
        res
          .writeHead(400, { "content-type": "text/plain" })
          .end('Expected a JSON body like {"input": "..."}.');
        return;
      }
      const triggerData =
        type === "timertrigger"
          ? {
              json: JSON.stringify({
                Schedule: { AdjustForDST: true },
                ScheduleStatus: null,
                IsPastDue: false,
              }),
            }
          : { string: input };
      void invoker.invoke(registration, {
        triggerData,
        reason: "This function was programmatically called via the host APIs.",
      });
      res.writeHead(202).end();
    };

    // 5. HTTP server (the durable client's RPC is mounted on it), then the engine, hooks and triggers.
    const server: RunningHttpServer = await startHttpServer({
      host: options.host ?? "127.0.0.1",
      port: options.port ?? localSettings?.localHttpPort ?? DEFAULT_PORT,
      routePrefix: hostConfig.http.routePrefix,
      functions: httpFunctions,
      invoke,
      logger,
      ...(signedInAs ? { defaultHeaders: encodeClientPrincipal(signedInAs) } : {}),
      mounts: {
        "/durabletask/": (req, res, rest) => engine.handleRpc(req, res, rest),
        "/admin/functions/": (req, res, rest) => adminInvoke(req, res, rest),
      },
    });
    baseUrl = server.url;
    cleanups.push(() => server.stop());
    // The durable client rewrites its status URLs to localhost:7071 unless the host names itself.
    cleanups.push(applySettingsToEnv({ WEBSITE_HOSTNAME: new URL(baseUrl).host }));
    for (const fn of httpFunctions) {
      const summary = summaries.find((s) => s.name === fn.registration.name);
      if (summary) summary.description = describeHttp(fn, baseUrl);
    }

    for (const hook of app.hooks.appStart) {
      await hook({ hookData: {}, appHookData: app.appHookData, functionAppDirectory: appRoot });
    }
    cleanups.push(async () => {
      for (const hook of app.hooks.appTerminate) await hook({ hookData: {}, appHookData: app.appHookData });
    });

    await engine.start();
    cleanups.push(() => engine.stop());
    const grace = options.shutdownGraceMs ?? 5000;
    // Triggers stop first (pushed last, so they run first), so nothing new starts while the rest winds down.
    cleanups.push(async () => {
      await Promise.all([...stoppers.map((stop) => stop(grace)), server.stop(grace)]);
      await invoker.drain(grace);
    });
    if (clock instanceof VirtualClock) {
      // Advancing a virtual clock waits for the timer invocations it caused, so that one advance() plays
      // a chain of occurrences in order, as the engine's durable timers do.
      const detach = clock.attach(async () => {
        for (const timer of timers) await timer.idle();
      });
      cleanups.push(detach);
    }
    for (const start of starters) start();

    logger.info(formatFunctionList(summaries));
    logger.info(`Host started: ${baseUrl} (task hub ${engine.taskHubName}, data ${options.dataDir})`);

    let stopping: Promise<void> | undefined;
    return {
      url: baseUrl,
      port: server.port,
      functions: summaries,
      engine,
      app,
      env: process.env,
      whenIdle: (timeoutMs = 30_000) => invoker.drain(timeoutMs),
      stop: () => (stopping ??= runCleanups().then(() => logger.info("Host stopped."))),
    };
  } catch (error) {
    await runCleanups();
    throw error;
  }
}
