/**
 * The Service Bus conventions on top of AMQP 1.0 that @azure/service-bus relies on: batch envelopes,
 * lock tokens as delivery tags in .NET GUID byte order, x-opt-* annotations, and settlement outcomes.
 * rhea's typings leave most of this as `any`; this module is where it gets types.
 */
import { message as rheaMessage, types, type Message, type Typed } from "rhea";
import { EncodedMessage, MessageDecodeError } from "./encodedMessage";
import type { StoredMessage } from "./queue";

/** `message_format` of an ordinary message: its bytes are the message's sections. */
export const PLAIN_MESSAGE_FORMAT = 0;

/** `message_format` of a batch: an envelope whose body is one data section per encoded message. */
export const BATCH_MESSAGE_FORMAT = 0x80013700;

/** The Standard tier's message size limit, which Azure enforces and the emulator too, by default. */
export const STANDARD_TIER_MAX_MESSAGE_SIZE_BYTES = 256 * 1024;

/**
 * The messages in one incoming transfer, as the client encoded them: a plain message (format 0), or
 * every message of a batch envelope.
 */
export function decodeTransfer(payload: Buffer, format: number | null | undefined): EncodedMessage[] {
  if (!format) return [EncodedMessage.decode(payload)];
  if (format !== BATCH_MESSAGE_FORMAT) {
    throw new MessageDecodeError(`unsupported message format 0x${(format >>> 0).toString(16)}`);
  }
  // The envelope's body sections are binary: rhea's decoding keeps them as they are.
  const envelope = decodeMessage(payload);
  const body = envelope.body as { multiple?: boolean; content?: unknown } | undefined;
  const sections = body?.multiple ? (body.content as Buffer[]) : [body?.content as Buffer];
  return sections.map((section) => EncodedMessage.decode(section));
}

/** A request to $cbs or $management, decoded (its values are read, never passed on). */
export function decodeMessage(encoded: Buffer): Message {
  return rheaMessage.decode(encoded) as unknown as Message;
}

/** A lock token (RFC 4122 string) as the delivery tag the SDK expects: the first three groups byte-swapped. */
export function deliveryTagFor(lockToken: string): Buffer {
  const b = Buffer.from(lockToken.replace(/-/g, ""), "hex");
  return Buffer.from([b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], ...b.subarray(8)] as number[]);
}

/** A lock token as management requests carry it (an AMQP uuid, RFC byte order). */
export function lockTokenFromAmqp(value: unknown): string {
  if (Buffer.isBuffer(value) && value.length === 16) {
    const hex = value.toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (typeof value === "string") return value.toLowerCase();
  throw new TypeError(`expected a lock token (uuid), got ${typeof value}`);
}

export function lockTokenToAmqp(lockToken: string): unknown {
  return types.wrap_uuid(Buffer.from(lockToken.replace(/-/g, ""), "hex"));
}

/** An AMQP long as rhea decodes it: a number when it fits in 53 bits, else 8 big-endian bytes. */
export function numberFromAmqpLong(value: unknown): number {
  if (typeof value === "number") return value;
  if (Buffer.isBuffer(value) && value.length === 8) return Number(value.readBigInt64BE(0));
  throw new TypeError(`expected a long, got ${typeof value}`);
}

/** Sequence numbers as an AMQP array of long, which the .NET client reads into a long[]. */
export function longArrayToAmqp(values: number[]): unknown {
  return types.wrap_array(values, AMQP_LONG, undefined);
}

/** Times as an AMQP array of timestamp, which the .NET client reads into a DateTime[]. */
export function timestampArrayToAmqp(msSinceEpoch: number[]): unknown {
  return types.wrap_array(msSinceEpoch, AMQP_TIMESTAMP, undefined);
}

const AMQP_LONG = 0x81;
const AMQP_TIMESTAMP = 0x83;
const MAX_AMQP_UINT = 0xffff_ffff;
/** x-opt-message-state, an int (.NET casts it to its ServiceBusMessageState enum). */
const MESSAGE_STATE = { active: 0, deferred: 1, scheduled: 2 } as const;

/**
 * The message as a receiver (or peek) sees it: the sender's encoding with the broker's header and
 * annotations. There is no x-opt-deadletter-source: Service Bus sets it only on a message that
 * auto-forwarding moved out of a dead-letter queue, which the emulator does not do.
 */
export function encodeForReceiver(
  stored: StoredMessage,
  options: { lockTokenAnnotation?: boolean } = {},
): Buffer {
  const annotations: Record<string, Typed> = {
    "x-opt-sequence-number": types.wrap_long(stored.sequenceNumber),
    "x-opt-enqueue-sequence-number": types.wrap_long(stored.sequenceNumber),
    "x-opt-enqueued-time": types.wrap_timestamp(stored.enqueuedAtMs),
  };
  if (stored.lockedUntilMs !== undefined) {
    annotations["x-opt-locked-until"] = types.wrap_timestamp(stored.lockedUntilMs);
  }
  if (stored.state !== "active")
    annotations["x-opt-message-state"] = types.wrap_int(MESSAGE_STATE[stored.state]);
  // A message received by sequence number has no delivery tag to carry its lock token: Service Bus puts
  // it in a delivery annotation, where the Python client reads it (.NET and Node read the response's).
  const deliveryAnnotations: Record<string, Typed> = {};
  if (options.lockTokenAnnotation && stored.lockToken) {
    deliveryAnnotations["x-opt-lock-token"] = lockTokenToAmqp(stored.lockToken) as Typed;
  }
  return stored.message.encode({
    deliveryAnnotations,
    deliveryCount: stored.deliveryCount,
    // Service Bus reports the TTL in force (the queue default when the sender set none), when it fits a uint.
    timeToLiveMs: stored.timeToLiveMs <= MAX_AMQP_UINT ? stored.timeToLiveMs : undefined,
    annotations,
  });
}

/** The settlement outcomes rhea can build; its typings do not declare them. */
type OutcomeKind = "accepted" | "rejected" | "released" | "modified";
type OutcomeBuilders = Record<OutcomeKind, (fields?: Record<string, unknown>) => { described(): unknown }>;
const outcomes = rheaMessage as unknown as OutcomeBuilders;

export interface AmqpErrorFields {
  condition: string;
  description: string;
  info?: Record<string, unknown>;
}

/**
 * The state a broker settles a delivery with: the receiver's outcome echoed without an error. An error
 * in the settled state would make the SDK reject completeMessage() or deadLetterMessage().
 */
export function settledOutcome(kind: OutcomeKind, undeliverableHere?: boolean): unknown {
  if (kind === "modified")
    return outcomes.modified({ undeliverable_here: Boolean(undeliverableHere) }).described();
  return outcomes[kind]().described();
}

/**
 * A settlement's properties to modify, with the AMQP types the client gave them: the
 * message-annotations of `modified` (abandon, defer) or the info of a `rejected` error (dead-letter).
 * rhea's view of the state has them as plain JavaScript values, which would be typed anew.
 */
export function typedPropertiesOf(kind: OutcomeKind, state: unknown): Record<string, Typed> {
  // An outcome rhea decoded keeps its fields, still typed, in `value`.
  const fields = (state as { value?: unknown } | null | undefined)?.value;
  if (!Array.isArray(fields)) return {};
  let map: unknown;
  if (kind === "modified") map = fields[2];
  else if (kind === "rejected") {
    const errorFields = (fields[0] as { value?: unknown } | undefined)?.value;
    map = Array.isArray(errorFields) ? errorFields[2] : undefined;
  }
  const items = (map as { value?: unknown } | undefined)?.value;
  const properties: Record<string, Typed> = {};
  if (!Array.isArray(items)) return properties;
  for (let i = 0; i + 1 < items.length; i += 2) {
    properties[String(types.unwrap(items[i]))] = items[i + 1] as Typed;
  }
  return properties;
}

/** A settled `rejected` carrying an error: how a broker refuses a disposition (e.g. the lock was lost). */
export function rejectedWith(error: AmqpErrorFields): unknown {
  // All three of the error's fields: azure-servicebus 7.14 for Python reads info by position
  // (error_info[0][2] in _pyamqp/client.py's _on_send_complete) and fails on a shorter list.
  return outcomes.rejected({ error: { info: null, ...error } }).described();
}
