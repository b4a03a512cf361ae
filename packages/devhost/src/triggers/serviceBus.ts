// Service Bus queue and topic-subscription triggers, and the serviceBus output binding, through the real
// @azure/service-bus client against whatever namespace the connection setting names (the embedded
// emulator locally). The trigger behaves like the Functions host with autoCompleteMessages: peek-lock, up
// to maxConcurrentCalls handlers at a time per function, complete when the function succeeds, abandon
// when it fails, so the broker's delivery count and dead-lettering at MaxDeliveryCount work as in Azure. A batched
// trigger (cardinality "many") receives up to maxMessageBatchSize messages at a time, one invocation per batch, and
// completes them all when the function succeeds or abandons them all when it fails, as the host does.
import {
  RetryMode,
  ServiceBusClient,
  type ServiceBusClientOptions,
  type ServiceBusMessage,
  type ServiceBusReceivedMessage,
  type ServiceBusReceiver,
  type ServiceBusSender,
} from "@azure/service-bus";
import type { Registration, RpcBindingInfo, RpcTypedData } from "../functionsCore";
import type { InvocationResult, InvokeRequest, OutputHandler } from "../invocation";
import type { HostLogger } from "../logger";
import { keepDispositionsApart } from "../amqpDispositions";
import { dotnetDateTime, dotnetDateTimeOffset, jsonSafe } from "./hostValues";
import { batchBodiesToTypedData, batchTriggerMetadata } from "./serviceBusBatch";
import {
  DEFAULT_HOST_CONFIG,
  resolveAppSettingExpressions,
  resolveConnectionString,
  type ClientRetryConfig,
} from "../settings";

/** How long a close of an SDK object may take. While the SDK retries a connection that cannot be made,
 *  its close waits for the retry to end (tens of seconds); shutdown must not. */
const CLOSE_TIMEOUT_MS = 2000;

function closeWithin(closing: Promise<unknown>, ms = CLOSE_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    closing.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The SDK's retry options for host.json's clientRetryOptions. Without them @azure/service-bus waits a fixed 30 s
 * between tries and 60 s a try: a trigger whose connection was reset, and whose first reconnection failed, would
 * receive nothing for half a minute, where the host's receivers are back within a second or two.
 */
export function sdkRetryOptions(
  retry: ClientRetryConfig,
): NonNullable<ServiceBusClientOptions["retryOptions"]> {
  return {
    mode: retry.mode === "fixed" ? RetryMode.Fixed : RetryMode.Exponential,
    maxRetries: retry.maxRetries,
    retryDelayInMs: retry.delayMs,
    maxRetryDelayInMs: retry.maxDelayMs,
    timeoutInMs: retry.tryTimeoutMs,
  };
}

/** One AMQP connection per connection string, shared by triggers and output bindings. */
export class ServiceBusClients {
  readonly #clients = new Map<string, ServiceBusClient>();
  readonly #senders = new Map<string, ServiceBusSender>();
  readonly #options: ServiceBusClientOptions;

  /** `retry`: host.json's clientRetryOptions (DEFAULT_HOST_CONFIG's when not given). */
  constructor(retry: ClientRetryConfig = DEFAULT_HOST_CONFIG.serviceBus.clientRetry) {
    // A completion and an abandonment in one tick must reach the broker as the two outcomes they are.
    keepDispositionsApart();
    this.#options = { retryOptions: sdkRetryOptions(retry) };
  }

  client(connectionString: string): ServiceBusClient {
    let client = this.#clients.get(connectionString);
    if (!client) {
      client = new ServiceBusClient(connectionString, this.#options);
      this.#clients.set(connectionString, client);
    }
    return client;
  }

  sender(connectionString: string, entity: string): ServiceBusSender {
    const key = `${connectionString}\n${entity}`;
    let sender = this.#senders.get(key);
    if (!sender) {
      sender = this.client(connectionString).createSender(entity);
      this.#senders.set(key, sender);
    }
    return sender;
  }

  async close(): Promise<void> {
    const senders = [...this.#senders.values()];
    const clients = [...this.#clients.values()];
    this.#senders.clear();
    this.#clients.clear();
    await closeWithin(Promise.allSettled(senders.map((s) => s.close())));
    await closeWithin(Promise.allSettled(clients.map((c) => c.close())));
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The message body as the host hands it to a Node function: text when it is text (JSON text is parsed
 *  by @azure/functions), bytes otherwise; AMQP value bodies (objects, numbers) as JSON. */
export function messageBodyToTypedData(body: unknown): RpcTypedData {
  if (body === undefined || body === null) return { string: "" };
  if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
    try {
      return { string: utf8.decode(body) };
    } catch {
      return { bytes: Buffer.from(body) };
    }
  }
  if (typeof body === "string") return { string: body };
  if (typeof body === "number") return Number.isInteger(body) ? { int: body } : { double: body };
  return { json: JSON.stringify(jsonSafe(body)) };
}

function dateText(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string" || typeof value === "number") return new Date(value).toISOString();
  return undefined;
}

/**
 * triggerMetadata the way the host fills it for a Service Bus trigger: the Service Bus extension's binding data for
 * one message (ServiceBusTriggerBindingStrategy.AddBindingData, keys in PascalCase; @azure/functions camel-cases
 * them, and the keys inside applicationProperties too, as it does in Azure), each value typed as the host types it
 * (hostValues.ts): strings as strings; DeliveryCount, SequenceNumber and the times as JSON. An unset value is left
 * out, as the host leaves out nulls. DeliveryCount is 1 on the first delivery, as the host (.NET SDK) counts; the JS
 * SDK's raw AMQP count starts at 0.
 */
export function messageTriggerMetadata(message: ServiceBusReceivedMessage): Record<string, RpcTypedData> {
  const metadata: Record<string, RpcTypedData> = {};
  const text = (name: string, value: unknown): void => {
    if (value !== undefined && value !== null && value !== "") metadata[name] = { string: String(value) };
  };
  const json = (name: string, value: unknown): void => {
    if (value !== undefined && value !== null) metadata[name] = { json: JSON.stringify(jsonSafe(value)) };
  };
  json("DeliveryCount", (message.deliveryCount ?? 0) + 1);
  text("DeadLetterSource", message.deadLetterSource);
  text("LockToken", message.lockToken);
  json("ExpiresAtUtc", dotnetDateTime(message.expiresAtUtc));
  json("ExpiresAt", dotnetDateTimeOffset(message.expiresAtUtc));
  json("EnqueuedTimeUtc", dotnetDateTime(message.enqueuedTimeUtc));
  json("EnqueuedTime", dotnetDateTimeOffset(message.enqueuedTimeUtc));
  text("MessageId", message.messageId);
  text("ContentType", message.contentType);
  text("ReplyTo", message.replyTo);
  json("SequenceNumber", message.sequenceNumber === undefined ? undefined : Number(message.sequenceNumber));
  text("To", message.to);
  text("Subject", message.subject);
  text("Label", message.subject);
  text("CorrelationId", message.correlationId);
  json("ApplicationProperties", message.applicationProperties ?? {});
  json("UserProperties", message.applicationProperties ?? {});
  text("SessionId", message.sessionId);
  text("ReplyToSessionId", message.replyToSessionId);
  text("PartitionKey", message.partitionKey);
  text("TransactionPartitionKey", message.partitionKey);
  return metadata;
}

export type ServiceBusEntity = { queueName: string } | { topicName: string; subscriptionName: string };

/** Reads the entity a trigger binding listens on, resolving %NAME% expressions. */
export function triggerEntity(registration: Registration): ServiceBusEntity {
  const trigger = registration.trigger;
  const where = `Function ${registration.name}`;
  const text = (key: string): string | undefined =>
    typeof trigger[key] === "string"
      ? resolveAppSettingExpressions(trigger[key], `${where} ${key}`)
      : undefined;
  const queueName = text("queueName");
  if (queueName) return { queueName };
  const topicName = text("topicName");
  const subscriptionName = text("subscriptionName");
  if (topicName && subscriptionName) return { topicName, subscriptionName };
  throw new Error(`${where}: a Service Bus trigger needs queueName, or topicName and subscriptionName.`);
}

export function entityLabel(entity: ServiceBusEntity): string {
  return "queueName" in entity
    ? entity.queueName
    : `${entity.topicName}/Subscriptions/${entity.subscriptionName}`;
}

export interface ServiceBusTriggerOptions {
  registration: Registration;
  connectionString: string;
  entity: ServiceBusEntity;
  maxConcurrentCalls: number;
  autoCompleteMessages: boolean;
  maxAutoLockRenewalMs: number;
  /** Set for a batched trigger (cardinality "many"): the most messages one invocation gets. */
  maxMessageBatchSize?: number;
  clients: ServiceBusClients;
  invoke: (registration: Registration, request: InvokeRequest) => Promise<InvocationResult>;
  logger: HostLogger;
  /** Waits the broker's delivery time before a received message goes to the function (a latency profile). */
  deliveryDelay?: () => Promise<void>;
}

/** Errors that retrying at once cannot mend: the entity is missing, or the credentials are refused. */
const LASTING_ERRORS = new Set(["MessagingEntityNotFound", "UnauthorizedAccess", "MessagingEntityDisabled"]);
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;
/** How long one receive of a batch waits for a first message before it asks again (and notices a stop). */
const BATCH_RECEIVE_WAIT_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ServiceBusTrigger {
  readonly #options: ServiceBusTriggerOptions;
  #receiver: ServiceBusReceiver | undefined;
  #subscription: { close(): Promise<void> } | undefined;
  #inFlight = new Set<Promise<void>>();
  #stopping = false;
  #paused = false;
  /** The next wait before receiving again after a lasting error; reset by a message received. */
  #retryMs = FIRST_RETRY_MS;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(options: ServiceBusTriggerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#subscribe();
  }

  /**
   * Stops receiving, as disabling the function does in Azure: messages stay in the queue (and their locks run
   * out as usual); invocations already running finish. `resume()` receives again.
   */
  async pause(): Promise<void> {
    if (this.#paused || this.#stopping) return;
    this.#paused = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const subscription = this.#subscription;
    const receiver = this.#receiver;
    this.#subscription = undefined;
    this.#receiver = undefined;
    await closeWithin(subscription?.close() ?? Promise.resolve());
    await closeWithin(receiver?.close() ?? Promise.resolve());
  }

  resume(): void {
    if (!this.#paused || this.#stopping) return;
    this.#paused = false;
    this.#subscribe();
  }

  #subscribe(): void {
    const { connectionString, entity, clients, maxConcurrentCalls, maxAutoLockRenewalMs } = this.#options;
    const client = clients.client(connectionString);
    const receiverOptions = {
      receiveMode: "peekLock" as const,
      // The host passes the raw body; @azure/functions decides how to parse it.
      skipParsingBodyAsJson: true,
      maxAutoLockRenewalDurationInMs: maxAutoLockRenewalMs,
    };
    const receiver =
      "queueName" in entity
        ? client.createReceiver(entity.queueName, receiverOptions)
        : client.createReceiver(entity.topicName, entity.subscriptionName, receiverOptions);
    this.#receiver = receiver;
    if (this.#options.maxMessageBatchSize !== undefined) {
      this.#subscription = this.#receiveBatches(receiver, this.#options.maxMessageBatchSize);
      return;
    }
    this.#subscription = receiver.subscribe(
      {
        processMessage: (message) => {
          this.#retryMs = FIRST_RETRY_MS;
          return this.#track(this.#process(receiver, message));
        },
        processError: async (args) => this.#onReceiveError(receiver, args.errorSource, args.error),
      },
      // Settlement is ours, as in the host: the SDK must not complete on its own.
      { maxConcurrentCalls, autoCompleteMessages: false },
    );
  }

  /**
   * A batched trigger's receive loop: one batch at a time, each handled before the next is received (the host's
   * batch listener does not overlap batches either). Closing it ends the loop once the current batch is handled.
   */
  #receiveBatches(receiver: ServiceBusReceiver, batchSize: number): { close(): Promise<void> } {
    let closed = false;
    const loop = (async () => {
      while (!closed) {
        let messages: ServiceBusReceivedMessage[];
        try {
          messages = await receiver.receiveMessages(batchSize, { maxWaitTimeInMs: BATCH_RECEIVE_WAIT_MS });
        } catch (error) {
          if (closed) return;
          // Not awaited: a lasting error closes this loop, which must not wait for itself.
          void this.#onReceiveError(receiver, "receive", error as Error);
          await sleep(FIRST_RETRY_MS);
          continue;
        }
        if (messages.length === 0) continue;
        this.#retryMs = FIRST_RETRY_MS;
        await this.#track(this.#processBatch(receiver, messages));
      }
    })();
    return {
      close: async () => {
        closed = true;
        await loop;
      },
    };
  }

  /**
   * The host's listener backs off when receiving keeps failing; the SDK alone retries a missing queue many times
   * a second. A lasting error (the queue does not exist, the key is refused) closes the receiver and opens a new
   * one after a growing wait, with one warning each time; a passing error is only logged.
   */
  async #onReceiveError(receiver: ServiceBusReceiver, source: string, error: Error): Promise<void> {
    const { registration, entity, logger } = this.#options;
    const code = (error as { code?: unknown }).code;
    const where = `Service Bus trigger ${registration.name} (${entityLabel(entity)})`;
    if (typeof code !== "string" || !LASTING_ERRORS.has(code)) {
      logger.warn(`${where}: ${source} error: ${error.message}`);
      return;
    }
    if (this.#retryTimer || this.#stopping || receiver !== this.#receiver) return;
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    logger.warn(`${where}: ${code}: ${error.message}; receiving again in ${wait / 1000} s`);
    const subscription = this.#subscription;
    this.#subscription = undefined;
    this.#receiver = undefined;
    await closeWithin(subscription?.close() ?? Promise.resolve());
    await closeWithin(receiver.close());
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (!this.#stopping && !this.#paused) this.#subscribe();
    }, wait);
  }

  /** Stops taking messages, lets running invocations finish (up to `graceMs`), then closes the receiver. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    if (this.#subscription) await closeWithin(this.#subscription.close());
    const deadline = Date.now() + graceMs;
    while (this.#inFlight.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.#inFlight]),
        new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
      ]);
      clearTimeout(timer);
    }
    if (this.#receiver) await closeWithin(this.#receiver.close());
  }

  #track(work: Promise<void>): Promise<void> {
    this.#inFlight.add(work);
    return work.finally(() => this.#inFlight.delete(work));
  }

  async #processBatch(receiver: ServiceBusReceiver, messages: ServiceBusReceivedMessage[]): Promise<void> {
    const { registration, entity, autoCompleteMessages, logger } = this.#options;
    if (this.#options.deliveryDelay) await this.#options.deliveryDelay();
    if (this.#stopping) {
      await settleAll(receiver, messages, false, () => undefined);
      return;
    }
    const label = entityLabel(entity);
    const result = await this.#options.invoke(registration, {
      triggerData: batchBodiesToTypedData(messages, registration.trigger.dataType === "binary"),
      triggerMetadata: batchTriggerMetadata(messages),
      reason: `New ServiceBus message detected on '${label}'.`,
      details:
        `Trigger Details: MessageCount: ${messages.length}, MessageIds: ` +
        messages.map((m) => String(m.messageId ?? "(null)")).join(", "),
    });
    if (!autoCompleteMessages) return;
    // All or nothing, as the host settles a batch: a failed invocation gives every message back for redelivery.
    await settleAll(receiver, messages, result.succeeded, (message, error) =>
      logger.warn(
        `Could not ${result.succeeded ? "complete" : "abandon"} message ${String(message.messageId)} on ${label} ` +
          `for ${registration.name}: ${error.message}`,
      ),
    );
  }

  async #process(receiver: ServiceBusReceiver, message: ServiceBusReceivedMessage): Promise<void> {
    const { registration, entity, autoCompleteMessages, logger } = this.#options;
    if (this.#options.deliveryDelay) await this.#options.deliveryDelay();
    if (this.#stopping) {
      // Delivered while shutting down: hand it straight back for the next run.
      await receiver.abandonMessage(message).catch(() => undefined);
      return;
    }
    const label = entityLabel(entity);
    const binary = registration.trigger.dataType === "binary" && Buffer.isBuffer(message.body);
    const result = await this.#options.invoke(registration, {
      triggerData: binary ? { bytes: message.body as Buffer } : messageBodyToTypedData(message.body),
      triggerMetadata: messageTriggerMetadata(message),
      reason: `New ServiceBus message detected on '${label}'.`,
      details:
        `Trigger Details: MessageId: ${message.messageId ?? "(null)"}, SequenceNumber: ${String(message.sequenceNumber ?? "")}, ` +
        `DeliveryCount: ${(message.deliveryCount ?? 0) + 1}, EnqueuedTimeUtc: ${dateText(message.enqueuedTimeUtc) ?? ""}, ` +
        `LockedUntilUtc: ${dateText(message.lockedUntilUtc) ?? ""}, SessionId: ${message.sessionId ?? "(null)"}`,
    });
    if (!autoCompleteMessages) return; // the function would have to settle it; Node functions cannot
    try {
      if (result.succeeded) await receiver.completeMessage(message);
      else await receiver.abandonMessage(message);
    } catch (error) {
      logger.warn(
        `Could not ${result.succeeded ? "complete" : "abandon"} message ${String(message.messageId)} on ${label} ` +
          `for ${registration.name}: ${(error as Error).message}`,
      );
    }
  }
}

/** Completes (or abandons) each message of a batch; a message whose settlement fails is logged, not retried. */
async function settleAll(
  receiver: ServiceBusReceiver,
  messages: readonly ServiceBusReceivedMessage[],
  succeeded: boolean,
  warn: (message: ServiceBusReceivedMessage, error: Error) => void,
): Promise<void> {
  await Promise.all(
    messages.map((message) =>
      (succeeded ? receiver.completeMessage(message) : receiver.abandonMessage(message)).catch(
        (error: unknown) => warn(message, error as Error),
      ),
    ),
  );
}

function toMessage(value: unknown): ServiceBusMessage {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return { body: Buffer.from(value) };
  if (typeof value === "string") return { body: Buffer.from(value, "utf8") };
  return { body: Buffer.from(JSON.stringify(value), "utf8"), contentType: "application/json" };
}

/** The values of one output binding as the host sends them: an array value is one message per element. */
export function typedDataToMessages(data: RpcTypedData): ServiceBusMessage[] {
  if (data.bytes) return [{ body: Buffer.from(data.bytes) }];
  if (typeof data.string === "string") return [toMessage(data.string)];
  if (typeof data.int === "number") return [toMessage(String(data.int))];
  if (typeof data.double === "number") return [toMessage(String(data.double))];
  if (data.collectionString?.string) return data.collectionString.string.map(toMessage);
  if (data.collectionBytes?.bytes) return data.collectionBytes.bytes.map((b) => ({ body: Buffer.from(b) }));
  if (typeof data.json === "string") {
    const parsed = JSON.parse(data.json) as unknown;
    return Array.isArray(parsed) ? parsed.map(toMessage) : [toMessage(parsed)];
  }
  return [];
}

/** The serviceBus output binding: sends what the function set (or returned) once it has finished. */
export function serviceBusOutput(clients: ServiceBusClients): OutputHandler {
  return async (binding: RpcBindingInfo, value: RpcTypedData, registration: Registration) => {
    const where = `Function ${registration.name} output binding`;
    const entityText = binding.queueName ?? binding.topicName;
    if (typeof entityText !== "string")
      throw new Error(`${where}: serviceBus output needs queueName or topicName.`);
    const entity = resolveAppSettingExpressions(entityText, where);
    const connection = typeof binding.connection === "string" ? binding.connection : undefined;
    const connectionString = resolveConnectionString(connection, "ServiceBus", registration.name);
    const messages = typedDataToMessages(value);
    if (messages.length === 0) return;
    await clients.sender(connectionString, entity).sendMessages(messages);
  };
}
