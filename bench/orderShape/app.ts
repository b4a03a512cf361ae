/**
 * An order's shape with the business taken out: a Functions app that makes the hops an order of the real app
 * makes (the same triggers, queues, durable actions and messages, their bodies as large as the real ones) and
 * nothing else: no store, no remote call, no validation, no tracing, no logging of its own. What its process
 * spends per order is what the devhost, the Functions library, the durable SDK and the bus cost an order of
 * this shape, however lean the app's code; orderShape.ts runs it. One file, since its parts are one fixture.
 *
 * Per order, as the real app's order profile shows it: the front door's POST, which records the submission and
 * admits the order (the first step's request, sent with the claim, and one durable start), an
 * orchestration that waits for one answer per step, each raced against a durable timer that is then cancelled,
 * one request per step to its service's agent (one agent per service, one reply per request), one reply delivery
 * per step that sends the next step's request (or the end's status) and raises one event, and STATUSES_PER_ORDER
 * status messages that nobody receives. The steps and their services are the declared process's
 * (src/domain/process.ts): in the sample, three agents and five statuses, and no activity.
 */
import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import type { OrchestrationContext } from "durable-functions";
import { ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";

import { orderWorkflowV1 } from "../../src/domain/process";
import { agentRequestQueue } from "../../src/domain/services";
import { MESSAGE_BYTES_SETTING, STATUS_QUEUE, STATUSES_PER_ORDER } from "./shape";

/** Each step's request queue: its service's agent's, as the real app sends it. */
const STEP_QUEUES = orderWorkflowV1.steps.map((step) => agentRequestQueue(step.agent));
/**
 * The status messages each dispatch (the admission's of the first step, then one per answer, in the reply path)
 * sends, STATUSES_PER_ORDER in all: one each, and one more from the admission's (received and processing).
 */
const STATUSES_BY_DISPATCH = Array.from({ length: STEP_QUEUES.length + 1 }, (_, i) => (i === 0 ? 2 : 1));
if (STATUSES_BY_DISPATCH.reduce((a, b) => a + b, 0) !== STATUSES_PER_ORDER)
  throw new Error("the order shape's dispatches must send STATUSES_PER_ORDER status messages");
/** A reply that never comes is not part of the shape: the timer only has to be there, and be cancelled. */
const STEP_TIMEOUT_MS = 10 * 60_000;

const messageBytes = Number(process.env[MESSAGE_BYTES_SETTING] ?? "470");
const connection = process.env.ServiceBusConnection;
if (!connection)
  throw new Error("the order shape needs the ServiceBusConnection setting (a connection string)");
const bus = new ServiceBusClient(connection);
const senders = new Map<string, ServiceBusSender>();
const sender = (queue: string) => {
  let existing = senders.get(queue);
  if (!existing) senders.set(queue, (existing = bus.createSender(queue)));
  return existing;
};

interface Hop {
  orderId: string;
  instanceId: string;
  step: number;
  kind: string;
  /** Filler to the real messages' size. */
  pad?: string;
}

function body(hop: Hop): Hop {
  const bare = JSON.stringify(hop).length;
  return { ...hop, pad: "x".repeat(Math.max(0, messageBytes - bare - 10)) };
}

async function send(queue: string, hop: Hop): Promise<void> {
  await sender(queue).sendMessages({
    body: body(hop),
    messageId: `${hop.instanceId}/${hop.step}/${hop.kind}`,
    contentType: "application/json",
  });
}

app.http("shapeSubmit", {
  methods: ["POST"],
  authLevel: "anonymous",
  route: "shape/{orderId}",
  extraInputs: [df.input.durableClient()],
  handler: async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => {
    const orderId = request.params.orderId ?? "";
    await request.text();
    const hop: Hop = { orderId, instanceId: `${orderId}:1`, step: 0, kind: "submitted" };
    await dispatch(hop);
    await df.getClient(context).startNew("shapeOrchestration", { instanceId: hop.instanceId, input: hop });
    return { status: 202 };
  },
});

df.app.orchestration("shapeOrchestration", function* (context: OrchestrationContext) {
  for (let step = 0; step < STEP_QUEUES.length; step++) {
    context.df.setCustomStatus({ stepIndex: step });
    const reply = context.df.waitForExternalEvent(`reply-${step}`);
    const deadline = context.df.createTimer(
      new Date(context.df.currentUtcDateTime.getTime() + STEP_TIMEOUT_MS),
    );
    yield context.df.Task.any([reply, deadline]);
    deadline.cancel();
  }
  return "finished";
});

/** A dispatch of step `hop.step` (past the last: the end), with the status messages it sends. */
async function dispatch(hop: Hop): Promise<void> {
  const statuses = STATUSES_BY_DISPATCH[hop.step] ?? 0;
  for (let i = 0; i < statuses; i++) await send(STATUS_QUEUE, { ...hop, kind: `status-${i}` });
  const queue = STEP_QUEUES[hop.step];
  if (queue) await send(queue, { ...hop, kind: "request" });
}

// One agent per service, as in the real app: it answers each request with a reply for the request's step.
[...new Set(STEP_QUEUES)].forEach((queueName, agent) => {
  app.serviceBusQueue(`shapeAgent${agent}`, {
    connection: "ServiceBusConnection",
    queueName,
    handler: async (message: unknown) => {
      await send("agent-replies", { ...(message as Hop), kind: "reply" });
    },
  });
});

app.serviceBusQueue("shapeReplies", {
  connection: "ServiceBusConnection",
  queueName: "agent-replies",
  extraInputs: [df.input.durableClient()],
  handler: async (message: unknown, context: InvocationContext) => {
    const hop = message as Hop;
    await dispatch({ ...hop, step: hop.step + 1 });
    await df.getClient(context).raiseEvent(hop.instanceId, `reply-${hop.step}`, hop);
  },
});
