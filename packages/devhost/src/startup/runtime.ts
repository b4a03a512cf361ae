// Start-up phase 4: what runs the app's functions. The invoker calls a function the way the worker does (hooks,
// bindings, the Executing/Executed lines); the durable engine runs orchestrations, activities and entities through
// it; the durableClient input points the app's durable client at this host, and the serviceBus output sends
// through shared clients.
import fs from "node:fs";
import { DurableEngine, type Clock } from "../durable";
import type { LoadedApp, Registration } from "../functionsCore";
import { Invoker, type InvocationResult, type InvokeRequest } from "../invocation";
import type { HostLatency } from "../latency/hostLatency";
import type { HostLogger } from "../logger";
import type { HostConfig } from "../settings";
import { serviceBusOutput, ServiceBusClients } from "../triggers/serviceBus";
import type { ShutdownSteps } from "./shutdown";

export type Invoke = (registration: Registration, request: InvokeRequest) => Promise<InvocationResult>;

export interface HostRuntime {
  engine: DurableEngine;
  invoker: Invoker;
  invoke: Invoke;
  clients: ServiceBusClients;
  clock: Clock;
  /** The latency profile at work, if any. */
  latency?: HostLatency;
  /**
   * Where the host serves HTTP and the durable RPC endpoint, once they listen: the durable client's binding data
   * names them.
   */
  setBaseUrl(url: string, rpcUrl: string): void;
  /** The durableClient input binding's value, as the app's client functions get it. */
  durableClientData(): unknown;
}

export interface RuntimeOptions {
  app: LoadedApp;
  registrations: Registration[];
  hostConfig: HostConfig;
  dataDir: string;
  clock: Clock;
  latency?: HostLatency;
  /** Runs each invocation in the app's time (time-skipping); default as is. */
  appTime?: <T>(run: () => T) => T;
  /** The durable webhooks' system key, which the management URLs carry. */
  durableKey: string;
}

export function createRuntime(
  options: RuntimeOptions,
  logger: HostLogger,
  shutdown: ShutdownSteps,
): HostRuntime {
  const { app, hostConfig, dataDir, clock, latency } = options;
  fs.mkdirSync(dataDir, { recursive: true });
  const byName = new Map(options.registrations.map((r) => [r.name, r]));
  let baseUrl = "";
  let rpcUrl = "";
  const { hubName, maxConcurrentActivityFunctions, httpPollIntervalMs } = hostConfig.durableTask;
  const engine: DurableEngine = new DurableEngine({
    dataDir,
    ...(hubName ? { taskHubName: hubName } : {}),
    ...(maxConcurrentActivityFunctions ? { maxConcurrentActivities: maxConcurrentActivityFunctions } : {}),
    ...(httpPollIntervalMs !== undefined ? { httpPollIntervalMs } : {}),
    clock,
    systemKey: options.durableKey,
    ...(latency ? { hopDelay: latency.hopDelay } : {}),
    log: (line) => logger.write({ level: "information", category: "system", message: line }),
    // Durable work goes through the invoker too, for hooks and the Executing/Executed lines. The engine
    // invokes nothing before start(), by which time `invoker` below exists.
    invoke: (reg, input, context): Promise<unknown> => {
      const registration = byName.get(reg.name);
      if (!registration) return Promise.resolve(reg.handler(input, context));
      latency?.durableActive();
      return invoker
        .invokeDirect(registration, context, [input], `${reg.kind} work item`)
        .finally(() => latency?.durableActive());
    },
  });
  const clients = new ServiceBusClients(hostConfig.serviceBus.clientRetry);
  shutdown.push(() => clients.close());
  const durableClientData = (): unknown => engine.clientBindingData(baseUrl, rpcUrl);
  const clientData = () => ({ string: JSON.stringify(durableClientData()) });
  const invoker: Invoker = new Invoker({
    app,
    logger,
    inputs: { durableClient: clientData, orchestrationClient: clientData },
    outputs: { serviceBus: serviceBusOutput(clients) },
    ...(options.appTime ? { appTime: options.appTime } : {}),
  });
  const invoke: Invoke = invoker.invoke.bind(invoker);
  return {
    engine,
    invoker,
    // A latency profile's cold starts apply to every invocation a trigger, a request or the admin API makes.
    invoke: latency ? latency.invokeWith(invoke) : invoke,
    clients,
    clock,
    ...(latency ? { latency } : {}),
    setBaseUrl: (url, rpc) => {
      baseUrl = url;
      rpcUrl = rpc;
    },
    durableClientData,
  };
}
