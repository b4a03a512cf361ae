/**
 * The whole app on the devhost against the local stack, for end-to-end tests: emulators and simulator on
 * ephemeral ports in this process, the app transpiled by the global setup and loaded by the devhost exactly as
 * `npm start` loads dist/src/index.js, timings shortened so that recovery paths run in seconds.
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
import {
  simulatorFaults,
  type FaultSpec,
  type InjectedFault,
  type LedgerEntry,
  type SimulatorFaults,
} from "../../tools/simulator";
import { settingsForSimulator } from "../../tools/simulator/settings";
import { expect, inject } from "vitest";
import { sampleOrder } from "./domain";
import { faultOn, processedLedger, stepIndex } from "./expectedProcess";
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

/** A predicate matching queue messages (status, alerts) about one order. */
export const forOrder =
  (orderId: string) =>
  (m: unknown): boolean =>
    (m as { orderId?: unknown } | null)?.orderId === orderId;

let counter = 0;
/**
 * The tests' sample order (domain.ts) under an id no other order of this run has, with `overrides` on top; they
 * may be of any type, for the tests of refused input.
 */
export function e2eOrder(
  prefix: string,
  overrides: Record<string, unknown> = {},
): { orderId: string } & Record<string, unknown> {
  return { ...sampleOrder({ orderId: `${prefix}-${process.pid}-${++counter}` }), ...overrides };
}

/**
 * Arms each fault for this order alone, then submits it through the front door: the start of every test of a
 * failure. Fails unless the order is accepted (202); resolves with the armed faults (their ids, for `remove`).
 */
export async function submitWithFaults(
  e2e: E2E,
  order: { orderId: string },
  ...faults: Array<Omit<FaultSpec, "orderId">>
): Promise<InjectedFault[]> {
  const armed: InjectedFault[] = [];
  for (const fault of faults) armed.push(await e2e.faults.add({ ...fault, orderId: order.orderId }));
  const res = await e2e.submit(order);
  if (res.status !== 202) throw new Error(`submitting ${order.orderId}: ${res.status} ${await res.text()}`);
  return armed;
}

/**
 * An order the Supervisor recovers: every call of its first attempt's payment step (chargePayment in the
 * declaration) fails (AGENT_MAX_ATTEMPTS=3), the agent replies transient, the attempt ends early with a deadline
 * notice, and attempt 2 finishes it. Resolves once it is Processed.
 */
export async function submitRecoveredOrder(e2e: E2E, prefix: string): Promise<{ orderId: string }> {
  const order = e2eOrder(prefix);
  await submitWithFaults(e2e, order, {
    ...faultOn(stepIndex("chargePayment")),
    kind: "transient",
    count: 3,
  });
  await e2e.waitForState(order.orderId, ["Processed"], 30_000);
  return order;
}

/**
 * Collects what a queue receives across a test file: each call drains the queue (receive-and-delete) into the
 * log, so a test can wait for a message that is sent just after a state write and still see earlier ones.
 */
export interface QueueLog {
  /** Everything received so far, after draining what is on the queue now. */
  all(): Promise<unknown[]>;
  /** Drains until a message matches; fails after `timeoutMs` listing what was seen. */
  waitFor(match: (message: unknown) => boolean, timeoutMs?: number): Promise<unknown>;
}

export function queueLog(e2e: E2E, queue: string): QueueLog {
  const seen: unknown[] = [];
  const all = async () => {
    seen.push(...(await e2e.drain(queue)));
    return [...seen];
  };
  return {
    all,
    async waitFor(match, timeoutMs = 15_000) {
      // A read of an empty queue waits half a second for messages: that is the pause between reads.
      const received = await pollUntil(
        all,
        (messages) => messages.some(match),
        (messages) =>
          `no matching message on ${queue} within ${timeoutMs} ms; seen: ${JSON.stringify(messages)}`,
        { timeoutMs, intervalMs: 10 },
      );
      return received.find(match);
    },
  };
}

export interface PeekedMessage {
  messageId: string | number | undefined;
  body: unknown;
  deadLetterReason: string | undefined;
  deadLetterErrorDescription: string | undefined;
  deliveryCount: number | undefined;
  subject: string | undefined;
  applicationProperties: Record<string, unknown>;
}
export type DeadLetter = PeekedMessage;

/**
 * Every message on `queue` (or its dead-letter subqueue) right now, left in place. A fresh client each time:
 * the SDK keeps the peek cursor on the management link it shares per entity, so a second peek through the same
 * client would start after the messages already seen.
 */
export async function peekAll(e2e: E2E, queue: string, subQueue?: "deadLetter"): Promise<PeekedMessage[]> {
  const client = new ServiceBusClient(e2e.emulators.serviceBusConnectionString);
  try {
    const receiver = client.createReceiver(queue, subQueue ? { subQueueType: subQueue } : {});
    return (await receiver.peekMessages(250)).map((m) => ({
      messageId: m.messageId as string | number | undefined,
      body: m.body as unknown,
      deadLetterReason: m.deadLetterReason,
      deadLetterErrorDescription: m.deadLetterErrorDescription,
      deliveryCount: m.deliveryCount,
      subject: m.subject,
      applicationProperties: { ...(m.applicationProperties ?? {}) },
    }));
  } finally {
    await client.close();
  }
}

/** Peeks the dead-letter subqueue of `queue` until a message with `messageId` is there (it stays there). */
export async function waitForDeadLetter(
  e2e: E2E,
  queue: string,
  messageId: string,
  timeoutMs = 30_000,
): Promise<DeadLetter> {
  const ours = (m: PeekedMessage) => m.messageId === messageId;
  const deadLetters = await pollUntil(
    () => peekAll(e2e, queue, "deadLetter"),
    (messages) => messages.some(ours),
    (messages) =>
      `${messageId} was not dead-lettered on ${queue} within ${timeoutMs} ms; ` +
      `dead letters there: ${JSON.stringify(messages.map((m) => m.messageId))}`,
    { timeoutMs, intervalMs: 250 },
  );
  return deadLetters.find(ours)!;
}

/**
 * Peeks rejected-messages until the message a trigger of `sourceQueue` refused, sent under `originalMessageId`, is
 * set aside there (it stays there), and gives it back with the reason the app recorded.
 */
export async function waitForRejected(
  e2e: E2E,
  sourceQueue: string,
  originalMessageId: string,
  timeoutMs = 30_000,
): Promise<PeekedMessage> {
  const ours = (m: PeekedMessage) =>
    m.applicationProperties.rejectedFrom === sourceQueue &&
    m.applicationProperties.originalMessageId === originalMessageId;
  const rejected = await pollUntil(
    () => peekAll(e2e, "rejected-messages"),
    (messages) => messages.some(ours),
    (messages) =>
      `${sourceQueue} message ${originalMessageId} was not set aside on rejected-messages within ${timeoutMs} ms; ` +
      `there: ${JSON.stringify(messages.map((m) => m.applicationProperties))}`,
    { timeoutMs, intervalMs: 100 },
  );
  return rejected.find(ours)!;
}

/** Sends one message to a queue of the app as any producer could: body, MessageId and content type as given. */
export async function sendToQueue(
  e2e: E2E,
  queue: string,
  body: unknown,
  messageId: string,
  contentType: string | undefined = "application/json",
): Promise<void> {
  const sender = e2e.bus.createSender(queue);
  try {
    await sender.sendMessages({ body, messageId, ...(contentType ? { contentType } : {}) });
  } finally {
    await sender.close();
  }
}

/** What a user checks to see that nothing happened to an order: its documents as the API shows them, and its ledger. */
export async function orderSnapshot(
  e2e: E2E,
  orderId: string,
): Promise<{ order: unknown; state: unknown; ledger: LedgerEntry[] }> {
  const res = await e2e.api(`/api/orders/${encodeURIComponent(orderId)}`);
  const body =
    res.status === 404
      ? { order: null, state: null }
      : ((await res.json()) as { order: unknown; state: unknown });
  return { order: body.order, state: body.state, ledger: await e2e.ledger(orderId) };
}

/**
 * The happy path's effects on the remote services: each step of the declaration's forward call (for the sample:
 * reserve, charge and book), in order, each applied once from one request.
 */
export async function expectOneSetOfEffects(
  harness: { ledger(orderId: string): Promise<LedgerEntry[]> },
  orderId: string,
): Promise<void> {
  const ledger = await harness.ledger(orderId);
  expect(ledger.map((e) => [e.idempotencyKey, e.applied, e.requests])).toEqual(
    processedLedger(orderId).map((call) => [call.idempotencyKey, true, 1]),
  );
}
