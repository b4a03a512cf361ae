/**
 * Link fields rhea 3 keeps on its objects but leaves out of its typings: the attach frames each side
 * sent, the credit, and the session's transfer cursor. Read here, in one place, with types.
 */
import {
  types,
  type Connection,
  type Delivery,
  type Receiver,
  type Sender,
  type Session,
  type Source,
  type TerminusOptions,
} from "rhea";

export interface AttachFields {
  name?: string;
  source?: Source;
  target?: TerminusOptions;
  snd_settle_mode?: number;
  rcv_settle_mode?: number;
  max_message_size?: unknown;
}

interface LinkInternals {
  state: { local_open: boolean; open_requests: number };
  remote: { attach?: AttachFields };
  local: { attach: AttachFields };
  credit: number;
  session: { outgoing: { next_pending_delivery: number } };
}

const internals = (link: Sender | Receiver) => link as unknown as LinkInternals;

/** The attach the client sent. */
export function remoteAttach(link: Sender | Receiver): AttachFields {
  return internals(link).remote.attach ?? {};
}

/** The attach the emulator will answer with (editable until rhea sends it on the next tick). */
export function localAttach(link: Sender | Receiver): AttachFields {
  return internals(link).local.attach;
}

/**
 * Whether the emulator's attach for this link is on the wire. Until it is, the link must not transfer:
 * rhea writes a session's transfers before its links' attaches, so a client that grants credit with
 * its attach (as the .NET client does with prefetch) would get transfers on a handle it cannot know yet.
 */
export function attachAnswered(link: Sender): boolean {
  const state = internals(link).state;
  return state.local_open && state.open_requests === 0;
}

/** The link credit the client granted and rhea has not yet used up by transfers. */
export function linkCredit(link: Sender): number {
  return internals(link).credit;
}

/** Delivery ids below this one are on the wire; the rest wait in the session for credit or window. */
export function nextUntransferredDeliveryId(link: Sender): number {
  return internals(link).session.outgoing.next_pending_delivery;
}

/**
 * Lets rhea drop a delivery the emulator has settled. rhea frees an outgoing delivery's slot in the
 * session (2048 by default) only once both ends have settled it, but in rcv-settle-mode second the
 * sender's settlement is the last word: the SDK settles silently and never says so. Without this,
 * every session stalls after 2048 peek-locked messages.
 */
export function forgetSettledDelivery(delivery: Delivery): void {
  (delivery as unknown as { remote_settled: boolean }).remote_settled = true;
}

interface SaslTransportInternals {
  mechanism?: unknown;
  /** rhea's "selective" server (SASL optional) keeps the SASL server as its transport for protocol id 3. */
  transports?: Record<number, { mechanism?: unknown } | undefined>;
}

/** The SASL mechanism object the connection authenticated with, if it used SASL. */
export function saslMechanismOf(connection: Connection): unknown {
  const transport = (connection as unknown as { sasl_transport?: SaslTransportInternals }).sasl_transport;
  return transport?.mechanism ?? transport?.transports?.[3]?.mechanism;
}

/**
 * Makes the answering attach carry a null source and target: how AMQP says a link is refused (the
 * detach with the error follows). rhea's own links start without either; this clears an echo too.
 */
export function answerAttachWithoutTerminus(link: Sender | Receiver): void {
  const local = internals(link).local.attach as { source?: unknown; target?: unknown };
  local.source = null;
  local.target = null;
}

interface TransferFrame {
  performative: { message_format?: number | null };
}
interface IncomingInternals {
  on_transfer(frame: TransferFrame, receiver: Receiver): void;
}
const undecodedSessions = new WeakSet<object>();

/**
 * Makes rhea hand this session's incoming messages over as the bytes the client sent. rhea decodes a
 * transfer of message format 0 into a Message and drops the bytes, and its decoding loses AMQP types
 * (int and uint, long and ulong all become numbers, a uuid a Buffer); a transfer of any other format
 * it hands over undecoded. So the format of a plain message is cleared before rhea reads it: the
 * 'message' event then carries the bytes, with a null format. Only this session's transfers change.
 */
export function receiveUndecoded(session: Session): void {
  if (undecodedSessions.has(session)) return;
  undecodedSessions.add(session);
  const incoming = (session as unknown as { incoming: IncomingInternals }).incoming;
  const onTransfer = incoming.on_transfer.bind(incoming);
  incoming.on_transfer = (frame, receiver) => {
    if (frame.performative.message_format === 0) frame.performative.message_format = null;
    onTransfer(frame, receiver);
  };
}

/** A performative as rhea builds it: one of its composite types, the fields in `value` by position. */
interface Performative {
  value: unknown[];
  constructor: new (fields: unknown[]) => Performative;
}
interface ConnectionInternals {
  _write_frame(channel?: number, frame?: Performative, payload?: Buffer): void;
}
const fieldCounts = new WeakMap<object, number>();
const amqpNull = () => (types as unknown as { Null(): unknown }).Null();
const fullConnections = new WeakSet<object>();

/**
 * Makes rhea write every field of each performative on this connection. rhea ends a field list at its
 * last set field (and writes an empty list as list0), as AMQP allows; the pure-Python AMQP stack of
 * azure-servicebus 7.9 and later reads performatives by position and fails on a short list. Service
 * Bus writes them in full.
 */
export function writeEveryPerformativeField(connection: Connection): void {
  if (fullConnections.has(connection)) return;
  fullConnections.add(connection);
  const internals = connection as unknown as ConnectionInternals;
  const write = internals._write_frame.bind(connection);
  internals._write_frame = (channel, frame, payload) => write(channel, frame && padded(frame), payload);
}

function padded(frame: Performative): Performative {
  const prototype = Object.getPrototypeOf(frame) as object;
  let count = fieldCounts.get(prototype);
  if (count === undefined) {
    // rhea defines each field as an accessor on the composite's prototype.
    count = Object.values(Object.getOwnPropertyDescriptors(prototype)).filter((field) => field.get).length;
    fieldCounts.set(prototype, count);
  }
  if (frame.value.length >= count && !frame.value.includes(undefined)) return frame;
  return new frame.constructor(Array.from({ length: count }, (_, i) => frame.value[i] ?? amqpNull()));
}
