// What a batched Service Bus trigger (cardinality "many") hands a Node function, in the host's shapes: the bodies
// as one collection, and triggerMetadata whose keys are the single-message ones with "Array" appended, each an
// array in message order. The key set is the Service Bus extension's (Microsoft.Azure.WebJobs.Extensions.ServiceBus,
// ServiceBusTriggerBindingStrategy.AddBindingData for a message array); the host sends string[] and long[] as typed
// collections and other arrays (int[], DateTime[], dictionaries) as JSON, and @azure/functions camel-cases the keys
// (messageIdArray, deliveryCountArray, applicationPropertiesArray...).
import type { ServiceBusReceivedMessage } from "@azure/service-bus";
import type { RpcTypedData } from "../functionsCore";
import { dotnetDateTime, dotnetDateTimeOffset, jsonSafe } from "./hostValues";
import { messageBodyToTypedData } from "./serviceBus";

/**
 * The bodies of a batch: a collection of strings when every body is text (JSON text is parsed element by element by
 * @azure/functions), else a collection of bytes; with dataType "binary", always bytes.
 */
export function batchBodiesToTypedData(
  messages: readonly ServiceBusReceivedMessage[],
  binary: boolean,
): RpcTypedData {
  const asBytes = (body: unknown): Uint8Array =>
    Buffer.isBuffer(body) || body instanceof Uint8Array
      ? Buffer.from(body)
      : Buffer.from(textOf(body) ?? "", "utf8");
  if (binary) return { collectionBytes: { bytes: messages.map((m) => asBytes(m.body)) } };
  const texts = messages.map((m) => textOf(m.body));
  if (texts.every((text): text is string => text !== undefined))
    return { collectionString: { string: texts } };
  return { collectionBytes: { bytes: messages.map((m) => asBytes(m.body)) } };
}

/** A body as the text the host would hand over, or undefined when it is bytes that are not UTF-8. */
function textOf(body: unknown): string | undefined {
  const typed = messageBodyToTypedData(body);
  if (typeof typed.string === "string") return typed.string;
  if (typeof typed.json === "string") return typed.json;
  if (typeof typed.int === "number") return String(typed.int);
  if (typeof typed.double === "number") return String(typed.double);
  return undefined;
}

/** triggerMetadata for a batch, keyed as the host keys it (PascalCase + "Array"). */
export function batchTriggerMetadata(
  messages: readonly ServiceBusReceivedMessage[],
): Record<string, RpcTypedData> {
  // A string[] element the message leaves unset: the host cannot put null in a collection, and sends "".
  const strings = (pick: (m: ServiceBusReceivedMessage) => unknown): RpcTypedData => ({
    collectionString: { string: messages.map((m) => (pick(m) == null ? "" : String(pick(m)))) },
  });
  const json = (pick: (m: ServiceBusReceivedMessage) => unknown): RpcTypedData => ({
    json: JSON.stringify(messages.map((m) => jsonSafe(pick(m) ?? null))),
  });
  // DateTime[] (from each DateTimeOffset's .DateTime: no zone) and DateTimeOffset[] (+00:00), as Newtonsoft writes them.
  const enqueuedUtc = json((m) => dotnetDateTime(m.enqueuedTimeUtc));
  const enqueued = json((m) => dotnetDateTimeOffset(m.enqueuedTimeUtc));
  const expiresUtc = json((m) => dotnetDateTime(m.expiresAtUtc));
  const expires = json((m) => dotnetDateTimeOffset(m.expiresAtUtc));
  const properties = json((m) => m.applicationProperties ?? {});
  return {
    // 1 on the first delivery, as the host (.NET SDK) counts; the JS SDK's raw AMQP count starts at 0.
    DeliveryCountArray: json((m) => (m.deliveryCount ?? 0) + 1),
    DeadLetterSourceArray: strings((m) => m.deadLetterSource),
    LockTokenArray: strings((m) => m.lockToken),
    ExpiresAtUtcArray: expiresUtc,
    ExpiresAtArray: expires,
    EnqueuedTimeUtcArray: enqueuedUtc,
    EnqueuedTimeArray: enqueued,
    MessageIdArray: strings((m) => m.messageId),
    ContentTypeArray: strings((m) => m.contentType),
    ReplyToArray: strings((m) => m.replyTo),
    SequenceNumberArray: { collectionSint64: { sint64: messages.map((m) => Number(m.sequenceNumber ?? 0)) } },
    ToArray: strings((m) => m.to),
    SubjectArray: strings((m) => m.subject),
    LabelArray: strings((m) => m.subject),
    CorrelationIdArray: strings((m) => m.correlationId),
    ApplicationPropertiesArray: properties,
    UserPropertiesArray: properties,
    SessionIdArray: strings((m) => m.sessionId),
    ReplyToSessionIdArray: strings((m) => m.replyToSessionId),
    PartitionKeyArray: strings((m) => m.partitionKey),
    TransactionPartitionKeyArray: strings((m) => m.partitionKey),
  };
}
