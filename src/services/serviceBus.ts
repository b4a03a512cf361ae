import { ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";
import type { ServiceBusConnectionConfig } from "../config";
import {
  AGENT_NAMES,
  agentRequestQueue,
  alertSchema,
  statusMessageSchema,
  type Alert,
  type StatusMessage,
} from "../domain";
import { credentialFor } from "./cosmos";

export function createServiceBusClient(connection: ServiceBusConnectionConfig): ServiceBusClient {
  return connection.kind === "connectionString"
    ? new ServiceBusClient(connection.connectionString)
    : new ServiceBusClient(connection.fullyQualifiedNamespace, credentialFor(connection.clientId));
}

export interface OutgoingMessage {
  body: unknown;
  /** Stable id: duplicate detection on the target queue drops a resend with the same id. */
  messageId?: string;
  correlationId?: string;
  subject?: string;
  applicationProperties?: Record<string, string | number | boolean>;
}

/** The queues the app sends to besides the agent request queues and the status queues. */
export const QUEUES = {
  orders: "orders",
  agentReplies: "agent-replies",
  alerts: "alerts",
} as const;

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

  async send(queue: string, message: OutgoingMessage): Promise<void> {
    await this.sender(queue).sendMessages({
      body: message.body,
      contentType: "application/json",
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.correlationId ? { correlationId: message.correlationId } : {}),
      ...(message.subject ? { subject: message.subject } : {}),
      ...(message.applicationProperties ? { applicationProperties: message.applicationProperties } : {}),
    });
  }

  /** An operator alert (docs/contract.md#messages), validated so that a malformed alert fails here rather than downstream. */
  async sendAlert(alert: Alert, messageId?: string): Promise<void> {
    await this.send(QUEUES.alerts, {
      body: alertSchema.parse(alert),
      subject: alert.kind,
      ...(messageId ? { messageId } : {}),
    });
  }

  async sendStatus(queue: string, status: StatusMessage): Promise<void> {
    await this.send(queue, {
      body: statusMessageSchema.parse(status),
      correlationId: status.orderId,
      subject: status.status,
    });
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.senders.values()].map((s) => s.close()));
    this.senders.clear();
  }
}
