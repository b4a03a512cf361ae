import { ServiceBusClient, type ServiceBusSender } from "@azure/service-bus";
import type { ServiceBusConnectionConfig } from "../config";
import { alertSchema, statusMessageSchema, type Alert, type StatusMessage } from "../domain";
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

/** Queue names of DESIGN §4. */
export const QUEUES = {
  orders: "orders",
  agentReplies: "agent-replies",
  alerts: "alerts",
} as const;

/**
 * Sends to Service Bus queues with one cached sender per queue (opening an AMQP link per message would cost a
 * round trip each time). Used by activities, agents and HTTP functions; triggers receive through the host.
 */
export class Messaging {
  private readonly senders = new Map<string, ServiceBusSender>();

  constructor(private readonly client: ServiceBusClient) {}

  private sender(queue: string): ServiceBusSender {
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

  /** An operator alert (DESIGN §4), validated so that a malformed alert fails here rather than downstream. */
  async sendAlert(alert: Alert): Promise<void> {
    await this.send(QUEUES.alerts, { body: alertSchema.parse(alert), subject: alert.kind });
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
