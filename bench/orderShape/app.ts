/**
 * An order's shape with the business taken out: a Functions app that makes the hops an order of the real app
 * makes (the same triggers, queues, durable actions and messages, store requests and remote calls, their bodies as
 * large as the real ones) and nothing else: no validation, no state machine, no tracing, no logging of its own.
 * What its process spends per order is what the devhost, the Functions library, the durable SDK, the bus and
 * store clients and `fetch` cost an order of this shape, however lean the app's code; orderShape.ts runs it. One
 * file, since its parts are one fixture.
 *
 * Per order, as the real app's order profile shows it: the front door's POST, which records the submission (the
 * order document and the state record created) and admits the order (a place taken in an admission shard, the
 * claim's replace of the record, the first step's request and one durable start); an orchestration that waits for
 * the order's end, raced against one durable timer that is then cancelled; one request per step to its service's
 * agent (one agent per service, one remote call and one reply per request); one reply delivery per step that
 * records the answer (a replace of the record) and sends the next step's request (or the end's status), the last
 * one raising the end's event; and STATUSES_PER_ORDER status messages that nobody receives. Every replace is
 * conditional on the etag the last write returned, as the real app's are. The steps and their services are the declared
 * process's (src/domain/process.ts): in the sample, three agents and five statuses, and no activity.
 */
import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import type { OrchestrationContext } from "durable-functions";
import { ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";
import { CosmosClient } from "@azure/cosmos";

import { orderWorkflowV1 } from "../../src/domain/process";
import { agentRequestQueue } from "../../src/domain/services";
import { parseCosmos } from "../../src/app/connectionStrings";
import { CONTAINERS } from "../../src/store/cosmos";
import {
  DOCUMENT_BYTES_SETTING,
  MESSAGE_BYTES_SETTING,
  REMOTE_URL_SETTING,
  STATUS_QUEUE,
  STATUSES_PER_ORDER,
  type ShapeDocuments,
} from "./shape";

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

const setting = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`the order shape needs the ${name} setting`);
  return value;
};
const messageBytes = Number(process.env[MESSAGE_BYTES_SETTING] ?? "470");
const documentBytes = JSON.parse(setting(DOCUMENT_BYTES_SETTING)) as ShapeDocuments;
const remoteUrl = setting(REMOTE_URL_SETTING);
const bus = new ServiceBusClient(setting("ServiceBusConnection"));
const problems: string[] = [];
const cosmos = parseCosmos(process.env, problems);
if (!cosmos || cosmos.kind !== "key")
  throw new Error(`the order shape needs CosmosConnection as a connection string: ${problems.join("; ")}`);
const database = new CosmosClient({
  endpoint: cosmos.endpoint,
  key: cosmos.key,
  connectionPolicy: { enableEndpointDiscovery: false },
}).database(setting("COSMOS_DATABASE"));
const containers = {
  orders: database.container(CONTAINERS.orders),
  state: database.container(CONTAINERS.state),
  leases: database.container(CONTAINERS.leases),
};
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

/** A document of `bytes` bytes under `id` (the containers' partition key is /orderId). */
function documentOf(id: string, bytes: number): { id: string; orderId: string; pad: string } {
  return { id, orderId: id, pad: "x".repeat(Math.max(0, bytes - 2 * id.length - 40)) };
}

/** Each order's state record's etag, as the real app's instances know the record they last wrote. */
const stateEtags = new Map<string, string>();

async function replaceState(orderId: string): Promise<void> {
  const { resource } = await containers.state
    .item(orderId, orderId)
    .replace(documentOf(orderId, documentBytes.state), {
      accessCondition: { type: "IfMatch", condition: stateEtags.get(orderId) ?? "" },
    });
  stateEtags.set(orderId, resource!._etag);
}

/**
 * The admission shards the claims take places in: each is taken by one POST at a time (a pool, so that no
 * replace meets a 412: the real app's writes to a shard go one at a time too), made when none is free.
 */
const freeShards: Array<{ id: string; etag: string }> = [];
let shardsMade = 0;

async function takePlace(): Promise<void> {
  let shard = freeShards.pop();
  if (!shard) {
    const id = `shape-shard-${shardsMade++}`;
    const { resource } = await containers.leases.items.upsert(documentOf(id, documentBytes.shard));
    shard = { id, etag: resource!._etag };
  }
  const { resource } = await containers.leases
    .item(shard.id, shard.id)
    .replace(documentOf(shard.id, documentBytes.shard), {
      accessCondition: { type: "IfMatch", condition: shard.etag },
    });
  freeShards.push({ id: shard.id, etag: resource!._etag });
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
    await containers.orders.items.create(documentOf(orderId, documentBytes.order));
    const { resource } = await containers.state.items.create(documentOf(orderId, documentBytes.stateCreated));
    stateEtags.set(orderId, resource!._etag);
    await takePlace();
    await replaceState(orderId);
    const hop: Hop = { orderId, instanceId: `${orderId}:1`, step: 0, kind: "submitted" };
    await df.getClient(context).startNew("shapeOrchestration", { instanceId: hop.instanceId, input: hop });
    await dispatch(hop);
    return { status: 202 };
  },
});

df.app.orchestration("shapeOrchestration", function* (context: OrchestrationContext) {
  context.df.setCustomStatus({ stepIndex: 0 });
  const ended = context.df.waitForExternalEvent("ended");
  const deadline = context.df.createTimer(
    new Date(context.df.currentUtcDateTime.getTime() + STEP_TIMEOUT_MS),
  );
  yield context.df.Task.any([ended, deadline]);
  deadline.cancel();
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
      const hop = message as Hop;
      const response = await fetch(remoteUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `${hop.instanceId}/${hop.step}` },
        body: JSON.stringify({ orderId: hop.orderId, step: hop.step }),
      });
      await response.text();
      await send("agent-replies", { ...hop, kind: "reply" });
    },
  });
});

app.serviceBusQueue("shapeReplies", {
  connection: "ServiceBusConnection",
  queueName: "agent-replies",
  extraInputs: [df.input.durableClient()],
  handler: async (message: unknown, context: InvocationContext) => {
    const hop = message as Hop;
    await replaceState(hop.orderId);
    await dispatch({ ...hop, step: hop.step + 1 });
    if (hop.step < STEP_QUEUES.length - 1) return;
    await df.getClient(context).raiseEvent(hop.instanceId, "ended", hop);
    stateEtags.delete(hop.orderId);
  },
});
