import { createHash } from "node:crypto";
import { RetryMode, ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";
import type { Span } from "@opentelemetry/api";
import type { ServiceBusConnectionConfig } from "../app/connectionStrings";
import {
  AGENT_NAMES,
  agentRequestQueue,
  alertSchema,
  QUEUES,
  statusMessageSchema,
  TRACE_PROPERTIES,
  type Alert,
  type StatusMessage,
} from "../domain";
import { credentialFor } from "../app/credential";
import { jsonText } from "./jsonText";
import { SET_ASIDE_CONTAINER, type KeptBody } from "../store/setAsideBodies";
import { BUS_CALLS, isTransientInfraError, SLOW_SEND_MS } from "../resilience/infraResilience";
import { inSpan, spanOf, SpanKind, traceProperties } from "../telemetry/tracing";

/** One client per process; each operation waits seconds, not the SDK's default minute (infraResilience.ts). */
export function createServiceBusClient(connection: ServiceBusConnectionConfig): ServiceBusClient {
  const options = { retryOptions: { ...BUS_CALLS, mode: RetryMode.Exponential } };
  return connection.kind === "connectionString"
    ? new ServiceBusClient(connection.connectionString, options)
    : new ServiceBusClient(connection.fullyQualifiedNamespace, credentialFor(connection.clientId), options);
}

export interface OutgoingMessage {
  body: unknown;
  /** Stable id: duplicate detection on the target queue drops a resend with the same id. */
  messageId?: string;
  correlationId?: string;
  subject?: string;
  /** Default application/json. */
  contentType?: string;
  applicationProperties?: Record<string, string | number | boolean>;
  /** Delivered from then on, not at once (a message put back for later: functions/rescheduled.ts). */
  scheduledEnqueueTimeUtc?: Date;
}

/** A message a trigger refused for good, set aside with the reason an operator needs (docs/operations.md). */
export interface RejectedMessage {
  sourceQueue: string;
  /** The body as the trigger received it: parsed JSON, text, or bytes. */
  body: unknown;
  originalMessageId: string;
  /** Unique per message in its queue and the same on every delivery of it: what makes a set-aside copy one. */
  originalSequenceNumber: string | undefined;
  originalContentType: string | undefined;
  originalEnqueuedTimeUtc: string | undefined;
  deliveryCount: number;
  /** Short and stable, for filters: invalid, conflict, refused. */
  reason: string;
  /** What exactly was wrong, naming the field or the mismatch. */
  description: string;
}

/** What a send still unanswered after SLOW_SEND_MS is noted as: a bus that does not answer. */
function slowSend(queue: string): Error {
  return Object.assign(new Error(`a send to ${queue} has had no answer for ${SLOW_SEND_MS} ms`), {
    code: "ServiceTimeout",
  });
}

/** How long a retired sender stays open for the sends still in flight on it: longer than all of BUS_CALLS' tries. */
const RETIRED_SENDER_CLOSE_MS = 60_000;

/** Service Bus limits a MessageId to 128 characters, and an application property value is kept short. */
const MAX_MESSAGE_ID = 128;
const MAX_DESCRIPTION = 4096;

/** How much of a body too large to set aside whole its copy carries: enough to see what the message was. */
export const SET_ASIDE_PREVIEW_BYTES = 4096;
/** The most the trace context adds to a message (traceProperties): a traceparent twice, a tracestate at W3C's 512. */
const TRACE_CONTEXT_ROOM: Record<string, string> = {
  [TRACE_PROPERTIES.traceparent]: `00-${"0".repeat(32)}-${"0".repeat(16)}-00`,
  [TRACE_PROPERTIES.diagnosticId]: `00-${"0".repeat(32)}-${"0".repeat(16)}-00`,
  [TRACE_PROPERTIES.tracestate]: "x".repeat(512),
};

/** The bytes a body is sent as. */
function bodyBytes(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(typeof body === "string" ? body : jsonText(body));
}

const ORDER_PATH_QUEUES: ReadonlySet<string> = new Set([
  QUEUES.orders,
  QUEUES.agentReplies,
  QUEUES.deadlines,
  ...AGENT_NAMES.map(agentRequestQueue),
]);

/** A queue an order's own work travels through (not a notification that leaves the app). */
const onOrderPath = (queue: string): boolean => ORDER_PATH_QUEUES.has(queue);

/**
 * Sends to Service Bus queues with one cached sender per queue (opening an AMQP link per message would cost a
 * round trip each time). Used by activities, agents and HTTP functions; triggers receive through the host.
 * It sends only to the queues the app has and the status queues the settings name (STATUS_QUEUES), so no
 * input can make it open a link to a queue of its choosing, and the cache holds at most that many senders.
 */
export class Messaging {
  private readonly senders = new Map<string, ServiceBusSender>();
  private readonly allowed: ReadonlySet<string>;

  constructor(
    private readonly client: ServiceBusClient,
    statusQueues: readonly string[],
    /** Told of each send that failed for a reason a later try may not meet (resilience/infraFaultLog.ts). */
    private readonly onFault: (fault: unknown) => void = () => undefined,
  ) {
    this.allowed = new Set([
      ...Object.values(QUEUES),
      ...AGENT_NAMES.map(agentRequestQueue),
      ...statusQueues,
    ]);
  }

  private sender(queue: string): ServiceBusSender {
    if (!this.allowed.has(queue)) {
      throw new Error(`queue ${JSON.stringify(queue)} is not one the app sends to (see STATUS_QUEUES)`);
    }
    let sender = this.senders.get(queue);
    if (!sender) {
      sender = this.client.createSender(queue);
      this.senders.set(queue, sender);
    }
    return sender;
  }

  /**
   * Sends one message, with the trace context of the span its sender runs in (`from`) in its application
   * properties, so that its receiver continues the trace. A hop of an order's own path (the orders queue, the agents' requests and replies, the
   * deadline notices) gets a producer span of its own: the trace then shows the send, and the time the message
   * waited on its queue before its receiver's span began.
   */
  async send(
    queue: string,
    message: OutgoingMessage,
    /** The sender's logger: the span it runs in is the message's parent (telemetry/tracing.ts). */
    from?: object,
  ): Promise<void> {
    if (!onOrderPath(queue)) return this.sendTraced(queue, message, spanOf(from));
    await inSpan(
      `send ${queue}`,
      {
        kind: SpanKind.PRODUCER,
        from,
        attributes: {
          "messaging.system": "servicebus",
          "messaging.operation.type": "send",
          "messaging.destination.name": queue,
          ...(message.messageId ? { "messaging.message.id": message.messageId } : {}),
          ...(message.correlationId ? { "sas.order_id": message.correlationId } : {}),
        },
      },
      (span) => this.sendTraced(queue, message, span),
    );
  }

  /**
   * Takes a sender whose send failed for a reason of the bus out of the cache, so that the next send to its queue
   * opens a new link: after a connection reset a cached sender's link can stay broken for as long as the SDK's own
   * recovery takes (a run saw sends to one queue slow for a minute after the reset). Sends still in flight on it
   * finish or time out on their own, within the SDK's tries (BUS_CALLS); then it is closed.
   */
  private retire(queue: string, sender: ServiceBusSender): void {
    if (this.senders.get(queue) !== sender) return;
    this.senders.delete(queue);
    setTimeout(() => void sender.close().catch(() => undefined), RETIRED_SENDER_CLOSE_MS).unref();
  }

  private async sendTraced(queue: string, message: OutgoingMessage, span: Span | undefined): Promise<void> {
    const applicationProperties = { ...message.applicationProperties, ...traceProperties(span) };
    const slow = setTimeout(() => this.onFault(slowSend(queue)), SLOW_SEND_MS).unref();
    const sender = this.sender(queue);
    try {
      await sender.sendMessages({
        body: message.body,
        contentType: message.contentType ?? "application/json",
        ...(message.messageId ? { messageId: message.messageId } : {}),
        ...(message.correlationId ? { correlationId: message.correlationId } : {}),
        ...(message.subject ? { subject: message.subject } : {}),
        ...(message.scheduledEnqueueTimeUtc
          ? { scheduledEnqueueTimeUtc: message.scheduledEnqueueTimeUtc }
          : {}),
        ...(Object.keys(applicationProperties).length > 0 ? { applicationProperties } : {}),
      });
    } catch (error) {
      if (isTransientInfraError(error)) {
        this.onFault(error);
        this.retire(queue, sender);
      }
      throw error;
    } finally {
      clearTimeout(slow);
    }
  }

  /** An operator alert (docs/contract.md#messages), validated so that a malformed alert fails here rather than downstream. */
  async sendAlert(alert: Alert, messageId?: string, from?: object): Promise<void> {
    await this.send(
      QUEUES.alerts,
      { body: alertSchema.parse(alert), subject: alert.kind, ...(messageId ? { messageId } : {}) },
      from,
    );
  }

  /**
   * Sets a refused message aside on rejected-messages: its body as received, the reason in application properties
   * (rejectedFrom, rejectionReason, rejectionDescription, originalMessageId, ...), and a MessageId derived from the
   * source queue and the original's sequence number, so that the queue's duplicate detection drops a second
   * forward of the same message while two different messages sent under one MessageId are both kept.
   *
   * The copy is the original plus those properties, so an original near the broker's size limit would not fit:
   * such a body is handed to `keepBody` (the state store's `rejected` container) and the copy carries its first
   * SET_ASIDE_PREVIEW_BYTES, with its size, its SHA-256 and where the whole of it went. The broker's own limit
   * decides (the sender link's max message size, as the SDK measures a batch), not a number of the app's.
   */
  async sendRejected(
    rejected: RejectedMessage,
    keepBody: (copyKey: string, body: Buffer) => Promise<KeptBody>,
    from?: object,
  ): Promise<void> {
    const key = `${rejected.sourceQueue}:${rejected.originalSequenceNumber ?? `id:${rejected.originalMessageId}`}`;
    const isJson =
      typeof rejected.body === "object" && rejected.body !== null && !(rejected.body instanceof Uint8Array);
    const whole: OutgoingMessage = {
      // The bytes of a JSON body, made here: a body nested too deep for the SDK's JSON.stringify is forwarded too.
      body: isJson ? Buffer.from(jsonText(rejected.body)) : rejected.body,
      messageId:
        key.length <= MAX_MESSAGE_ID ? key : `sha256:${createHash("sha256").update(key).digest("hex")}`,
      subject: rejected.reason,
      contentType: rejected.originalContentType ?? (isJson ? "application/json" : "text/plain"),
      applicationProperties: {
        rejectedFrom: rejected.sourceQueue,
        rejectionReason: rejected.reason,
        rejectionDescription: rejected.description.slice(0, MAX_DESCRIPTION),
        originalMessageId: rejected.originalMessageId,
        ...(rejected.originalSequenceNumber
          ? { originalSequenceNumber: rejected.originalSequenceNumber }
          : {}),
        originalDeliveryCount: rejected.deliveryCount,
        ...(rejected.originalEnqueuedTimeUtc
          ? { originalEnqueuedTimeUtc: rejected.originalEnqueuedTimeUtc }
          : {}),
      },
    };
    if (await this.fits(QUEUES.rejected, whole)) return this.send(QUEUES.rejected, whole, from);
    const body = bodyBytes(whole.body);
    const kept = await keepBody(key, body);
    await this.send(
      QUEUES.rejected,
      {
        ...whole,
        body: body.subarray(0, SET_ASIDE_PREVIEW_BYTES),
        // The preview is a cut: no longer the JSON or text it began as.
        contentType: "application/octet-stream",
        applicationProperties: {
          ...whole.applicationProperties,
          ...(whole.contentType ? { originalContentType: whole.contentType.slice(0, MAX_DESCRIPTION) } : {}),
          bodyCut: true,
          originalBodyBytes: kept.bodyBytes,
          originalBodySha256: kept.sha256,
          fullBodyAt: `${SET_ASIDE_CONTAINER}/${kept.id}`,
          fullBodyParts: kept.parts,
        },
      },
      from,
    );
  }

  /** Whether `message` fits on `queue` as it is: the SDK measures it against the link's max message size. */
  private async fits(queue: string, message: OutgoingMessage): Promise<boolean> {
    const sender = this.sender(queue);
    const batch = await sender.createMessageBatch().catch((error: unknown) => {
      // The link is opened here when it is not yet: a bus fault then is a send's fault.
      if (isTransientInfraError(error)) {
        this.onFault(error);
        this.retire(queue, sender);
      }
      throw error;
    });
    return batch.tryAddMessage({
      body: message.body,
      contentType: message.contentType ?? "application/json",
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.subject ? { subject: message.subject } : {}),
      applicationProperties: { ...message.applicationProperties, ...TRACE_CONTEXT_ROOM },
    });
  }

  async sendStatus(queue: string, status: StatusMessage, from?: object): Promise<void> {
    await this.send(
      queue,
      { body: statusMessageSchema.parse(status), correlationId: status.orderId, subject: status.status },
      from,
    );
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.senders.values()].map((s) => s.close()));
    this.senders.clear();
  }
}
