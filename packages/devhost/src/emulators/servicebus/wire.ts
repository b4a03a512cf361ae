/**
 * The Service Bus conventions on top of AMQP 1.0 that @azure/service-bus relies on: batch envelopes,
 * lock tokens as delivery tags in .NET GUID byte order, x-opt-* annotations, and settlement outcomes.
 * rhea's typings leave most of this as `any`; this module is where it gets types.
 */
import { message as rheaMessage, types, type Message } from "rhea";
import type { StoredMessage } from "./queue";

/** `message_format` of a batch: an envelope whose body is one data section per encoded message. */
export const BATCH_MESSAGE_FORMAT = 0x80013700;

/** What the emulator advertises as max_message_size; the SDK sizes createMessageBatch() from it. */
export const MAX_MESSAGE_SIZE_BYTES = 256 * 1024; // the Standard tier's limit

/** The messages in one incoming transfer: a plain message, or every message of a batch envelope. */
export function decodeTransfer(payload: Message | Buffer, format: number | undefined): Message[] {
  if (!format) return [payload as Message];
  if (format !== BATCH_MESSAGE_FORMAT || !Buffer.isBuffer(payload)) {
    throw new Error(`unsupported message format 0x${(format >>> 0).toString(16)}`);
  }
  const envelope = decodeMessage(payload);
  const body = envelope.body as { multiple?: boolean; content?: unknown } | undefined;
  const sections = body?.multiple ? (body.content as Buffer[]) : [body?.content as Buffer];
  return sections.map(decodeMessage);
}

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

export function longToAmqp(value: number): unknown {
  return types.wrap_long(value);
}

const MAX_AMQP_UINT = 0xffff_ffff;

/** The message as a receiver (or peek) sees it: the sent message plus the broker's header and annotations. */
export function toWireMessage(stored: StoredMessage): Message {
  const annotations: Record<string, unknown> = {
    ...stored.message.message_annotations,
    "x-opt-sequence-number": types.wrap_long(stored.sequenceNumber),
    "x-opt-enqueue-sequence-number": types.wrap_long(stored.sequenceNumber),
    "x-opt-enqueued-time": new Date(stored.enqueuedAtMs),
  };
  if (stored.lockedUntilMs !== undefined) annotations["x-opt-locked-until"] = new Date(stored.lockedUntilMs);
  if (stored.state !== "active") annotations["x-opt-message-state"] = stored.state === "deferred" ? 1 : 2;
  if (stored.deadLetterSource !== undefined) annotations["x-opt-deadletter-source"] = stored.deadLetterSource;
  const wire: Message = {
    ...stored.message,
    delivery_count: stored.deliveryCount,
    message_annotations: annotations,
  };
  // Service Bus reports the TTL in force (the queue default when the sender set none), when it fits a uint.
  if (stored.timeToLiveMs <= MAX_AMQP_UINT) wire.ttl = stored.timeToLiveMs;
  return wire;
}

export function encodeMessage(message: Message): Buffer {
  return rheaMessage.encode(message);
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

/** A settled `rejected` carrying an error: how a broker refuses a disposition (e.g. the lock was lost). */
export function rejectedWith(error: AmqpErrorFields): unknown {
  return outcomes.rejected({ error }).described();
}
