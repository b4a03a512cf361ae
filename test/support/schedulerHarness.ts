/**
 * The Scheduler orchestration alone on the devhost, on a virtual clock: its own code, replayed by the real
 * durable-functions library in the devhost's durable engine, with each Scheduler activity replaced by a stub that
 * the test scripts per order. Answers go in through the app's own durable client calls (attemptClient), over the
 * devhost's durable HTTP API, as the reply path raises them; or as earlier builds raised them, which in-flight
 * histories may still hold: the recorded move as the step's own event, or the agent's reply itself. Durable timers (a step's completeBy, the waits between activity retries) fire only
 * when the test moves the clock, so a deadline a week ahead takes milliseconds.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { startDevHost, VirtualClock, type DevHost, type DurableEngine, type InstanceStatus } from "devhost";
import {
  agentRequestId,
  instanceIdFor,
  parseInstanceId,
  replyEventName,
  type AgentReply,
  type ProcessState,
  type StepKind,
} from "../../src/domain";
import {
  schedulerActivities,
  type AfterDeadline,
  type AfterReply,
  type AttemptInput,
  type DispatchOutcome,
  type RecordedAnswer,
  type SchedulerActivities,
} from "../../src/scheduler/activities";
import { attemptClient } from "../../src/scheduler/durableClient";
import { SCHEDULER_ORCHESTRATION, schedulerOrchestration } from "../../src/scheduler/orchestration";
import { T0 } from "./domain";

type ActivityName = keyof SchedulerActivities;

/** What a stub returns on the `call`-th execution (from 0) of its activity for one order; it may throw. */
export type Stub<N extends ActivityName> = (
  input: Parameters<SchedulerActivities[N]>[2],
  call: number,
) => Awaited<ReturnType<SchedulerActivities[N]>>;

/** An order's stubs. An activity without one fails every execution, so a test scripts each call it expects. */
export type Script = { [N in ActivityName]?: Stub<N> };

export interface ActivityCall {
  name: ActivityName;
  input: unknown;
  /** Virtual time of the execution. */
  at: string;
}

export interface SchedulerHarness {
  clock: VirtualClock;
  engine: DurableEngine;
  /** Starts attempt 1 of `orderId` as the starter does, runs it until it waits, and returns its instance id. */
  start(orderId: string, script: Script): Promise<string>;
  /**
   * Tells the attempt the move the reply path recorded for `reply` (`recorded`) through the app's durable client,
   * as the reply router does (which raises only a move that ends the attempt's dispatches), and lets the
   * orchestration run until it waits again.
   */
  deliverRecorded(reply: AgentReply, recorded: AfterReply): Promise<void>;
  /** Raises the recorded move as the step's own event, as builds before ATTEMPT_ENDED_EVENT did for every answer. */
  deliverAsStepEvent(reply: AgentReply, recorded: AfterReply): Promise<void>;
  /** Raises `reply` itself, as builds before the reply path recorded answers did, and runs until the next wait. */
  deliver(reply: AgentReply): Promise<void>;
  /** The stub executions for `orderId`, in order. */
  calls(orderId: string): ActivityCall[];
  /** The instance's status with its history. */
  status(instanceId: string): InstanceStatus;
  stop(): Promise<void>;
}

/** Returns `results` one per call; a call past the end throws, failing that activity execution. */
export function inOrder<R>(...results: R[]): (input: unknown, call: number) => R {
  return (_input, call) => {
    if (call >= results.length) throw new Error(`stub: unscripted call ${call + 1}`);
    return results[call]!;
  };
}

export const dispatched = (stepIndex: number, direction: StepKind, completeBy: Date): DispatchOutcome => ({
  kind: "dispatched",
  stepIndex,
  direction,
  completeBy: completeBy.toISOString(),
});

export const dispatchFinished = (processState: ProcessState): DispatchOutcome => ({
  kind: "finished",
  processState,
});

export const CONTINUE: AfterReply = { kind: "continue" };

export const REPORTED: AfterDeadline = { kind: "reported" };

/** An agent's successful answer to a step of `instanceId`, with ids as the agent derives them from its request. */
export function okReply(instanceId: string, stepIndex: number, kind: StepKind, result?: unknown): AgentReply {
  const attempt = parseInstanceId(instanceId);
  if (!attempt) throw new Error(`not an attempt id: ${instanceId}`);
  return {
    requestId: agentRequestId(instanceId, stepIndex, kind),
    orderId: attempt.orderId,
    instanceId,
    stepIndex,
    kind,
    outcome: "ok",
    result,
  };
}

// The harness app (apps/scheduler-harness) calls this while the devhost loads it.
const REGISTER = Symbol.for("schedulerHarness.register");
const HARNESS_ENTRY = path.join(__dirname, "apps", "scheduler-harness", "index.js");

export async function startSchedulerHarness(): Promise<SchedulerHarness> {
  const clock = new VirtualClock(T0);
  const scripts = new Map<string, Script>();
  const calls = new Map<string, ActivityCall[]>();
  const slots = globalThis as unknown as Record<symbol, (() => void) | undefined>;
  slots[REGISTER] = () => {
    df.app.orchestration(SCHEDULER_ORCHESTRATION, schedulerOrchestration);
    for (const name of Object.keys(schedulerActivities) as ActivityName[]) {
      df.app.activity(name, {
        handler: (input: AttemptInput) => {
          const made = calls.get(input.orderId) ?? [];
          calls.set(input.orderId, made);
          const call = made.filter((c) => c.name === name).length;
          made.push({ name, input, at: clock.now().toISOString() });
          const stub = scripts.get(input.orderId)?.[name] as Stub<ActivityName> | undefined;
          if (!stub) throw new Error(`stub: no ${name} scripted for ${input.orderId}`);
          return stub(input as never, call);
        },
      });
    }
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "scheduler-harness-"));
  let host: DevHost;
  try {
    host = await startDevHost({ appEntry: HARNESS_ENTRY, dataDir, port: 0, clock, log: () => {} });
  } finally {
    delete slots[REGISTER];
  }
  const raw = durableClient(host.durableClientData());
  const attempts = attemptClient(raw);
  return {
    clock,
    engine: host.engine,
    async start(orderId, script) {
      scripts.set(orderId, script);
      const instanceId = instanceIdFor(orderId, 1);
      await attempts.start(instanceId, orderId);
      await host.engine.whenIdle();
      return instanceId;
    },
    async deliverRecorded(reply, recorded) {
      await attempts.deliverRecorded(reply, recorded);
      await host.engine.whenIdle();
    },
    async deliverAsStepEvent(reply, recorded) {
      const event: RecordedAnswer = { requestId: reply.requestId, recorded };
      await raw.raiseEvent(reply.instanceId, replyEventName(reply.stepIndex, reply.kind), event);
      await host.engine.whenIdle();
    },
    async deliver(reply) {
      await raw.raiseEvent(reply.instanceId, replyEventName(reply.stepIndex, reply.kind), reply);
      await host.engine.whenIdle();
    },
    calls: (orderId) => calls.get(orderId) ?? [],
    status(instanceId) {
      const status = host.engine.getStatus(instanceId, { showHistory: true });
      if (!status) throw new Error(`no instance ${instanceId}`);
      return status;
    },
    async stop() {
      await host.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A durable client as df.getClient builds it in a client function, from the binding data the host passes. */
function durableClient(clientData: unknown): df.DurableClient {
  const binding = df.input.durableClient();
  const context = new InvocationContext({ options: { extraInputs: [binding] }, logHandler: () => {} });
  context.extraInputs.set(binding, clientData);
  return df.getClient(context);
}
