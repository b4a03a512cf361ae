/**
 * Fault proxies between the app and its own store and bus, on loopback: the failures Azure's network and services
 * produce, which the embedded emulators never do, made on demand so that a test can show the app survives them.
 * What the SDKs do with each (which they retry themselves, which reach the app) is pinned by
 * test/integration/support/faultProxy.test.ts.
 *
 * Cosmos DB (HTTP, faultProxy/http.ts; error answers shaped as the service sends them, faultProxy/cosmos.ts):
 * - 429 TooManyRequests (substatus 3200, x-ms-retry-after-ms): a partition's provisioned RU/s spent. The SDK
 *   retries it itself, 9 times and 30 s of waits at most, waiting what the header asks; a rule with a larger
 *   count, or a duration, is throttling that outlasts the SDK's retries and reaches the app.
 * - 503 ServiceUnavailable (substatus 21008): a partition moving (split, migration) or a regional failover under
 *   way. With endpoint discovery off (plain http, as src/store/cosmos.ts sets it) the SDK does not retry it.
 * - 408 RequestTimeout: the service gave up on the request within its own time limit. Not retried by the SDK.
 * - 449 RetryWith: another write to the same resource was in progress. @azure/cosmos 4.9 has no policy for it
 *   (its status table names it, nothing uses it): the app sees it.
 * - stall: a half-open connection (a NAT or load balancer dropped the flow, a gateway node died): the request
 *   went out and nothing comes back, neither answer nor reset. Only the client's own timeout ends it
 *   (connectionPolicy.requestTimeout, 60 s by default): a TimeoutError, not retried with discovery off, even for
 *   a read. `forward: true` is the worse case: the write applied and only its answer was lost.
 * - reset: the connection reset mid-request (a gateway recycled): ECONNRESET, which the SDK retries for reads
 *   and queries (after 1 s, up to 10 times) and hands over for writes. delay: a slow gateway or network.
 *
 * Service Bus (AMQP over TCP, faultProxy/tcp.ts):
 * - reset: the gateway resets the connection (the namespace's nodes upgraded, a load balancer timing the flow
 *   out): every link on it fails at once. The SDK reconnects on its next operation; but an operation in flight
 *   at the reset waits out its timeout (retryOptions.timeoutInMs, 60 s by default) and then the retry delay
 *   (retryDelayInMs, 30 s by default) before it is sent again.
 * - blackhole: a silent network, no bytes either way and no FIN or RST: the SDK learns nothing except through
 *   its own timeouts. Bytes are held, not lost: when the outage ends they arrive as TCP's retransmissions would,
 *   so a send the SDK reported as timed out can still be delivered. `end: "reset"` ends it with the connections
 *   reset instead (an outage longer than TCP or the peer's idle timeout will wait).
 * - refuse: the namespace unreachable for new connections while open ones carry on.
 *
 * `startFaultyStack()` is the local stack with a proxy in front of each: the app is given the proxies' addresses,
 * the test's own clients (reading the store, the alerts queue, the ledger) the emulators', so that they see the
 * truth while the app's view is broken. `startE2E` and `startChildStack` take the same proxies with the option
 * `faultProxies`.
 */
import { EMULATOR_KEY } from "devhost/emulators";
import {
  pointAt,
  startLocalStack,
  type LocalStack,
  type LocalStackAddresses,
  type LocalStackOptions,
} from "../../tools/localStack";
import { sampleSettings } from "../../tools/repository";
import { startHttpFaultProxy, type HttpFaultProxy } from "./faultProxy/http";
import { startTcpFaultProxy, type TcpFaultProxy } from "./faultProxy/tcp";

export * from "./faultProxy/cosmos";
export * from "./faultProxy/http";
export * from "./faultProxy/tcp";

/** The two proxies of a faulty stack. */
export interface FaultProxies {
  /** In front of the Service Bus emulator's AMQP port. */
  serviceBus: TcpFaultProxy;
  /** In front of the Cosmos DB stand-in. */
  cosmos: HttpFaultProxy;
  /** Back to a healthy network: both proxies to pass, every rule retired. */
  clear(): void;
}

export interface FaultyStack {
  stack: LocalStack;
  /** The emulators themselves (and the simulator): what the test's own clients use. */
  direct: LocalStackAddresses;
  /** The same, with Service Bus and Cosmos DB behind the proxies: what the app is given. */
  proxied: LocalStackAddresses;
  proxies: FaultProxies;
  /**
   * The shipped settings pointed at the proxies (and the simulator), `overrides` last: the settings of an app in
   * a child process (AppProcess).
   */
  appSettings(overrides?: Record<string, string>): Record<string, string>;
  /** Stops the proxies, then the stack. */
  stop(): Promise<void>;
}

/** A Service Bus emulator connection string with its endpoint's port replaced. */
function withPort(serviceBusConnectionString: string, port: number): string {
  return serviceBusConnectionString.replace(/(Endpoint=sb:\/\/[^:;/]+):\d+/i, `$1:${port}`);
}

/** The proxies in front of a running stack's emulators. */
export interface StartedProxies {
  proxies: FaultProxies;
  /** The stack's addresses with Service Bus and Cosmos DB behind the proxies. */
  proxied: LocalStackAddresses;
  /** The shipped settings pointed at `proxied`, `overrides` last. */
  appSettings(overrides?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

/** Starts the proxies in front of a running stack's emulators. */
export async function startFaultProxies(direct: LocalStackAddresses): Promise<StartedProxies> {
  const busUrl = new URL(/Endpoint=(sb:\/\/[^;]+)/i.exec(direct.serviceBusConnectionString)?.[1] ?? "");
  const serviceBus = await startTcpFaultProxy({ host: busUrl.hostname, port: Number(busUrl.port) });
  let cosmos: HttpFaultProxy;
  try {
    cosmos = await startHttpFaultProxy(direct.cosmosEndpoint);
  } catch (error) {
    await serviceBus.close();
    throw error;
  }
  const proxied: LocalStackAddresses = {
    ...direct,
    serviceBusConnectionString: withPort(direct.serviceBusConnectionString, serviceBus.port),
    cosmosConnectionString: `AccountEndpoint=${cosmos.url}/;AccountKey=${EMULATOR_KEY};`,
    cosmosEndpoint: cosmos.url,
  };
  const shipped = sampleSettings();
  return {
    proxies: {
      serviceBus,
      cosmos,
      clear() {
        serviceBus.clear();
        cosmos.clear();
      },
    },
    proxied,
    appSettings: (overrides = {}) => ({ ...pointAt(proxied, shipped), ...overrides }),
    close: async () => {
      await Promise.all([serviceBus.close(), cosmos.close()]);
    },
  };
}

/** The local stack (tools/localStack.ts) with the fault proxies in front of its Service Bus and Cosmos DB. */
export async function startFaultyStack(options: LocalStackOptions = {}): Promise<FaultyStack> {
  const stack = await startLocalStack(options);
  let started: StartedProxies;
  try {
    started = await startFaultProxies(stack.emulators);
  } catch (error) {
    await stack.stop();
    throw error;
  }
  return {
    stack,
    direct: stack.emulators,
    proxied: started.proxied,
    proxies: started.proxies,
    appSettings: started.appSettings,
    async stop() {
      // The proxies first: a connection they hold would otherwise keep an emulator's close waiting.
      await started.close();
      await stack.stop();
    },
  };
}
