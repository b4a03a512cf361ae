/**
 * The whole app on the devhost against the local stack, for end-to-end tests: emulators and simulator on
 * ephemeral ports in this process, the app transpiled by the global setup and loaded by the devhost exactly as
 * `npm start` loads dist/src/index.js, timings shortened so that recovery paths run in seconds. The tests' orders
 * and what they check of them are in e2eOrders.ts, the queues around the app in e2eQueues.ts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ServiceBusClient } from "@azure/service-bus";
import { startDevHost, type DevHost, type LogRecord } from "devhost";
import { encodeClientPrincipal, type ClientPrincipal } from "devhost/auth";
import type { ProcessState, StateRecord } from "../../src/domain";
import { FAST_TIMINGS } from "../../tools/fastTimings";
import { startLocalStack, type LocalStackAddresses } from "../../tools/localStack";
import { startFaultProxies, type FaultProxies } from "./faultProxy";
import { sampleSettings } from "../../tools/repository";
import { simulatorFaults, type LedgerEntry, type SimulatorFaults } from "../../tools/simulator";
import { settingsForSimulator } from "../../tools/simulator/settings";
import { inject } from "vitest";
import { pollUntil } from "./wait";

export type { FaultSpec, InjectedFault, LedgerEntry, SimulatorFaults } from "../../tools/simulator";

/** The app entry, transpiled from the current sources by the global setup. */
export const APP_ENTRY = path.join(inject("appBuildDir"), "src", "index.js");

/** The fast timings, and what only the e2e harness needs. */
export const E2E_SETTINGS: Record<string, string> = {
  ...FAST_TIMINGS,
  // No platform in front of the devhost: it passes on the principal a request carries, or adds E2E_OPERATOR.
  OPERATOR_AUTH: "header",
};

/** Who the harness's requests act as unless a test says otherwise: an operator, so every route answers. */
export const E2E_OPERATOR = { name: "e2e-operator", id: "oid-e2e-operator", roles: ["Orders.Operator"] };

/** Waiting for an order's state record, however a harness reads it (the API, or the store). */
export interface RecordWaits {
  /** Polls the state record until it is in one of `states`; fails with the last record seen after `timeoutMs`. */
  waitForState(orderId: string, states: ProcessState[], timeoutMs?: number): Promise<StateRecord>;
  /** Polls the state record until `predicate` holds; fails naming `what`, with the last record seen. */
  waitForRecord(
    orderId: string,
    predicate: (record: StateRecord) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<StateRecord>;
}

export interface E2E extends RecordWaits {
  host: DevHost;
  /** The emulators themselves: what the harness's own clients use, so they see the truth during faults. */
  emulators: LocalStackAddresses;
  /** With `faultProxies`: the proxies between the app and its store and bus (faultProxy.ts). */
  proxies?: FaultProxies;
  bus: ServiceBusClient;
  logs: LogRecord[];
  /** fetch against the app's HTTP API: `api("/api/orders")`. */
  api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** POST /api/orders; returns the response. */
  submit(order: unknown): Promise<Response>;
  /** POST /api/orders/{orderId}/retry or /cancel with a JSON body, as E2E_OPERATOR unless `as` is given. */
  operate(
    orderId: string,
    action: "retry" | "cancel",
    options?: { as?: ClientPrincipal; reason?: string },
  ): Promise<Response>;
  state(orderId: string): Promise<StateRecord | null>;
  ledger(orderId?: string): Promise<LedgerEntry[]>;
  /** The simulator's faults: `add` arms one and returns it, with its id for `remove` and its hits in `list`. */
  faults: SimulatorFaults;
  /** Messages on a queue right now (receive-and-delete). */
  drain(queue: string): Promise<unknown[]>;
  stop(): Promise<void>;
}

export interface E2EOptions {
  /** The principal of requests that send none (default E2E_OPERATOR); null: requests act as nobody. */
  signedInAs?: ClientPrincipal | null;
  /**
   * Run the app on the devhost's virtual clock, which jumps to the next due timer whenever the host is idle
   * (packages/devhost/docs/time-skipping.md): production-length deadlines and back-offs pass in seconds. Waits on
   * the app's time then read `e2e.host.clock`, never Date.
   */
  timeSkipping?: boolean;
  /**
   * Put fault proxies (faultProxy.ts) between the app and the Service Bus and Cosmos DB emulators: `e2e.proxies`
   * breaks the app's connections while the harness's own still reach the emulators.
   */
  faultProxies?: boolean;
}

/** Starts the stack and the app on it, with `settings` on top of E2E_SETTINGS and the shipped ones. */
export async function startE2E(
  settings: Record<string, string> = {},
  options: E2EOptions = {},
): Promise<E2E> {
  const stack = await startLocalStack();
  const { emulators } = stack;
  const faulty = options.faultProxies ? await startFaultProxies(emulators) : undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-"));
  const logs: LogRecord[] = [];
  // The devhost reads the shipped settings itself (the app root is the repository's) and points their emulator
  // connections at the stack's; the simulator URLs are this harness's to point.
  const explicit = { ...E2E_SETTINGS, ...settings };
  const host = await startDevHost({
    appEntry: APP_ENTRY,
    dataDir,
    port: 0,
    emulators: faulty?.proxied ?? emulators,
    settings: {
      ...explicit,
      ...settingsForSimulator(emulators.simulatorUrl, { ...sampleSettings(), ...explicit }),
    },
    signedInAs: options.signedInAs === undefined ? E2E_OPERATOR : options.signedInAs,
    ...(options.timeSkipping ? { timeSkipping: true } : {}),
    log: (record) => {
      logs.push(record);
      if (process.env.E2E_LOGS) process.stdout.write(`${record.message}\n`);
    },
  });
  const bus = new ServiceBusClient(emulators.serviceBusConnectionString);
  const sim = emulators.simulatorUrl;

  const api = (pathAndQuery: string, init?: RequestInit) => fetch(`${host.url}${pathAndQuery}`, init);
  const state = async (orderId: string): Promise<StateRecord | null> => {
    // The harness reads as an operator whatever principal the devhost adds (none, in the sign-in tests).
    const res = await api(`/api/orders/${encodeURIComponent(orderId)}`, {
      headers: encodeClientPrincipal(E2E_OPERATOR),
    });
    if (res.status === 404) return null;
    return ((await res.json()) as { state: StateRecord | null }).state;
  };
  return {
    host,
    emulators,
    ...(faulty ? { proxies: faulty.proxies } : {}),
    bus,
    logs,
    api,
    submit: (order) =>
      api("/api/orders", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(order),
      }),
    operate: (orderId, action, opts = {}) =>
      api(`/api/orders/${encodeURIComponent(orderId)}/${action}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...encodeClientPrincipal(opts.as ?? E2E_OPERATOR) },
        body: JSON.stringify(opts.reason ? { reason: opts.reason } : {}),
      }),
    state,
    ...recordWaits(state),
    ...simulatorAndQueues(sim, bus),
    async stop() {
      await bus.close();
      // A healthy network for the app's shutdown, then no proxy holding an emulator's connection open.
      faulty?.proxies.clear();
      await host.stop();
      await faulty?.close();
      await stack.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** waitForState and waitForRecord over `state`, the harness's way to read a record. */
export function recordWaits(state: (orderId: string) => Promise<StateRecord | null>): RecordWaits {
  const waitForRecord: RecordWaits["waitForRecord"] = (orderId, predicate, what, timeoutMs = 30_000) =>
    pollUntil(
      () => state(orderId),
      (record): record is StateRecord => record !== null && predicate(record),
      (last) => `order ${orderId}: ${what} not seen within ${timeoutMs} ms; ${describeRecord(last)}`,
      { timeoutMs },
    );
  return {
    waitForRecord,
    waitForState: (orderId, states, timeoutMs) =>
      waitForRecord(orderId, (r) => states.includes(r.processState), states.join("/"), timeoutMs),
  };
}

/** What a failed wait says about the record it last read: enough to see where the order got stuck. */
function describeRecord(record: StateRecord | null): string {
  if (!record) return "no state record";
  return (
    `last state ${record.processState}, attempt ${record.attempt}, ` +
    `steps ${record.steps.map((s) => s.status).join("/")}, history ${JSON.stringify(record.history.slice(-5))}`
  );
}

/**
 * The simulator's ledger and faults, and queue draining: the part of the harness that only needs the emulators'
 * addresses (shared with the child-process harness, e2eChild.ts).
 */
export function simulatorAndQueues(
  sim: string,
  bus: ServiceBusClient,
): Pick<E2E, "ledger" | "faults" | "drain"> {
  return {
    async ledger(orderId) {
      const res = await fetch(`${sim}/_ledger`);
      const entries = ((await res.json()) as { entries: LedgerEntry[] }).entries;
      return orderId ? entries.filter((e) => e.orderId === orderId) : entries;
    },
    faults: simulatorFaults(sim),
    async drain(queue) {
      const receiver = bus.createReceiver(queue, { receiveMode: "receiveAndDelete" });
      try {
        return (await receiver.receiveMessages(100, { maxWaitTimeInMs: 500 })).map((m) => m.body as unknown);
      } finally {
        await receiver.close();
      }
    },
  };
}
