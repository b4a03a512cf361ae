/**
 * An order's shape with the business taken out: a Functions app that makes the hops an order of the real app
 * makes (the same triggers, queues, durable actions and messages, store requests and remote calls, carrying the
 * real order's documents and messages as the end-to-end run sampled them, and the real front door's request and
 * answer) and nothing else: no validation, no state machine, no tracing, no logging of its own.
 * What its process spends per order is what the devhost, the Functions library, the durable SDK, the bus and
 * store clients and `fetch` cost an order of this shape, however lean the app's code; orderShape.ts runs it. One
 * file, since its parts are one fixture.
 *
 * Per order, as the real app's order profile shows it: the front door's POST, which records the submission (the
 * order document and the state record created) and admits the order (its share of a claim round's query, a place
 * taken in an admission shard, the claim's replace of the record, the first step's request and one durable
 * start); an orchestration that waits for the order's end, raced against one durable timer that is then
 * cancelled; one request per step to its service's agent (one agent per service, one remote call and one reply
 * per request, and the read of the service's breaker record that comes with time); one reply delivery per step
 * that records the answer (a replace of the record) and sends the next step's request (or the end's status), the
 * last one raising the end's event; and STATUSES_PER_ORDER status messages that nobody receives. Every replace is
 * conditional on the etag the last write returned, as the real app's are. The steps and their services are the
 * declared process's (src/domain/process.ts): in the sample, three agents and five statuses, and no activity.
 */
import fs from "node:fs";
import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import type { OrchestrationContext } from "durable-functions";
import { ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";
import { CosmosClient } from "@azure/cosmos";

import { parseCosmos } from "../../src/app/connectionStrings";
import { ADMISSION } from "../../src/domain/admission";
import { breakerRecordId } from "../../src/domain/breaker";
import { agentRequestQueue } from "../../src/domain/services";
import type { AgentName } from "../../src/domain/workflow";
import { BREAKER_CACHE_MS } from "../../src/remote/sharedBreaker";
import { CONTAINERS } from "../../src/store/cosmos";
import { claimableQuery } from "../../src/store/stateQueries";
import {
  PAYLOADS_FILE_SETTING,
  REMOTE_URL_SETTING,
  REPLY_QUEUE,
  SERVICES,
  STATUS_QUEUE,
  STATUSES_PER_ORDER,
  STEP_QUEUES,
  type ShapeDocumentKind,
  type ShapePayloads,
} from "./shape";

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
const payloads = JSON.parse(fs.readFileSync(setting(PAYLOADS_FILE_SETTING), "utf8")) as ShapePayloads;
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

/** Where an order's message is in its order: the shape reads it from the message id, its bodies are the real ones. */
interface Hop {
  orderId: string;
  instanceId: string;
  step: number;
  kind: string;
}

const messageIdOf = (hop: Hop) => `${hop.instanceId}/${hop.step}/${hop.kind}`;

function hopOf(context: InvocationContext): Hop {
  const [instanceId = "", step = "0", kind = ""] = String(context.triggerMetadata?.messageId ?? "").split(
    "/",
  );
  return { orderId: instanceId.slice(0, instanceId.lastIndexOf(":")), instanceId, step: Number(step), kind };
}

/** A real payload under this order's id, where it has one. */
function underOrderId(payload: unknown, orderId: string): unknown {
  return payload && typeof payload === "object" && "orderId" in payload ? { ...payload, orderId } : payload;
}

/** The real document of `kind` under `id` (the containers' partition key is /orderId). */
function documentOf(id: string, kind: ShapeDocumentKind): Record<string, unknown> {
  return { ...payloads.documents[kind], id, orderId: id };
}

/** Each order's state record's etag, as the real app's instances know the record they last wrote. */
const stateEtags = new Map<string, string>();

async function replaceState(orderId: string): Promise<void> {
  const { resource } = await containers.state.item(orderId, orderId).replace(documentOf(orderId, "state"), {
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
    const { resource } = await containers.leases.items.upsert(documentOf(id, "shard"));
    shard = { id, etag: resource!._etag };
  }
  const { resource } = await containers.leases
    .item(shard.id, shard.id)
    .replace(documentOf(shard.id, "shard"), {
      accessCondition: { type: "IfMatch", condition: shard.etag },
    });
  freeShards.push({ id: shard.id, etag: resource!._etag });
}

/**
 * The claim rounds' queries: the real front door's claim round asks the state container for due records (and the
 * SDK first for the query's plan) once for however many orders it then admits, so the shape queries as often per
 * order as the end-to-end run's orders did, for as many records as a round may claim.
 */
let claimQueriesOwed = 0;

async function claimRoundQuery(): Promise<void> {
  claimQueriesOwed += payloads.claimQueriesPerOrder;
  if (claimQueriesOwed < 1) return;
  claimQueriesOwed -= 1;
  await containers.state.items
    .query(claimableQuery(new Date()), { maxItemCount: ADMISSION.claimsPerRound })
    .fetchNext();
}

/** The queue's real message, with this hop's message id and order id, its other properties as the real one's. */
async function send(queue: string, hop: Hop): Promise<void> {
  const real = payloads.messages[queue]!;
  await sender(queue).sendMessages({
    body: underOrderId(real.body, hop.orderId),
    messageId: messageIdOf(hop),
    ...(real.contentType ? { contentType: real.contentType } : {}),
    ...(real.correlationId ? { correlationId: hop.orderId } : {}),
    ...(real.subject ? { subject: real.subject } : {}),
    ...(real.applicationProperties
      ? { applicationProperties: real.applicationProperties as Record<string, string | number | boolean> }
      : {}),
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
    await containers.orders.items.create(documentOf(orderId, "order"));
    const { resource } = await containers.state.items.create(documentOf(orderId, "stateCreated"));
    stateEtags.set(orderId, resource!._etag);
    await claimRoundQuery();
    await takePlace();
    await replaceState(orderId);
    const hop: Hop = { orderId, instanceId: `${orderId}:1`, step: 0, kind: "submitted" };
    await df.getClient(context).startNew("shapeOrchestration", { instanceId: hop.instanceId, input: hop });
    await dispatch(hop);
    // The front door's answer, as large as the real one's.
    const statusUrl = new URL(`/api/orders/${encodeURIComponent(orderId)}/status`, request.url).toString();
    return { status: 202, jsonBody: { orderId, statusUrl }, headers: { location: statusUrl } };
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

/**
 * When each service's breaker record was last read. The real app reads a service's shared breaker before a call (and
 * in each claim round) whenever its copy is older than BREAKER_CACHE_MS, so these reads come with time, not with
 * orders: a slower run makes more of them per order. No record exists while no call has failed, so the read finds
 * nothing, as the real one does.
 */
const breakerReadAt = new Map<string, number>();

async function readBreaker(service: AgentName): Promise<void> {
  const readAt = breakerReadAt.get(service);
  if (readAt !== undefined && Date.now() - readAt < BREAKER_CACHE_MS) return;
  const id = breakerRecordId(service);
  await containers.leases.item(id, id).read();
  breakerReadAt.set(service, Date.now());
}

// One agent per service, as in the real app: it answers each request with a reply for the request's step.
SERVICES.forEach((service, agent) => {
  app.serviceBusQueue(`shapeAgent${agent}`, {
    connection: "ServiceBusConnection",
    queueName: agentRequestQueue(service),
    handler: async (_message: unknown, context: InvocationContext) => {
      const hop = hopOf(context);
      await readBreaker(service);
      const response = await fetch(remoteUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `${hop.instanceId}/${hop.step}` },
        body: JSON.stringify({ orderId: hop.orderId, step: hop.step }),
      });
      await response.text();
      await send(REPLY_QUEUE, { ...hop, kind: "reply" });
    },
  });
});

app.serviceBusQueue("shapeReplies", {
  connection: "ServiceBusConnection",
  queueName: REPLY_QUEUE,
  extraInputs: [df.input.durableClient()],
  handler: async (_message: unknown, context: InvocationContext) => {
    const hop = hopOf(context);
    await replaceState(hop.orderId);
    await dispatch({ ...hop, step: hop.step + 1 });
    if (hop.step < STEP_QUEUES.length - 1) return;
    await df.getClient(context).raiseEvent(hop.instanceId, "ended", hop);
    stateEtags.delete(hop.orderId);
  },
});
