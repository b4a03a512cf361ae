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

/** The begin the emulator will answer a client's with (editable until rhea sends it on the next tick). */
export function localBegin(session: Session): { handle_max?: number } {
  return (session as unknown as { local: { begin: { handle_max?: number } } }).local.begin;
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
  constructor: (new (fields: unknown[]) => Performative) & { toString(): string };
}
interface ConnectionInternals {
  _write_frame(channel?: number, frame?: Performative, payload?: Buffer): void;
}
/** A performative's fields in order, and where AMQP gives one a default, its position and value. */
interface PerformativeLayout {
  count: number;
  defaults: { index: number; name: string; value: number | boolean }[];
  /** The position of an `error` field (detach, end, close), or -1. */
  errorIndex: number;
}
const layouts = new WeakMap<object, PerformativeLayout>();
const amqpNull = () => (types as unknown as { Null(): unknown }).Null();
const NULL_TYPECODE = 0x40;
const fullConnections = new WeakSet<object>();

/**
 * Each field's default as OASIS AMQP 1.0 part 2.7 defines it, by performative (rhea names a composite
 * "<name>#<code>") and field (as rhea spells it). rhea leaves a field unset when it holds its default;
 * a strict client does not apply the default to a null but reads the null itself.
 */
const SPEC_DEFAULTS: Record<string, Record<string, number | boolean>> = {
  open: { max_frame_size: 4294967295, channel_max: 65535 }, // 2.7.1
  begin: { handle_max: 4294967295 }, // 2.7.2
  attach: { snd_settle_mode: 2, rcv_settle_mode: 0, incomplete_unsettled: false }, // 2.7.3 (mixed, first)
  flow: { drain: false, echo: false }, // 2.7.4
  transfer: { more: false, resume: false, aborted: false, batchable: false }, // 2.7.5
  disposition: { settled: false, batchable: false }, // 2.7.6
  detach: { closed: false }, // 2.7.7
};

/**
 * Makes rhea write every field of each performative on this connection, a field it left unset as its
 * AMQP default where the field has one, else as null. rhea ends a field list at its last set field (and
 * writes an empty list as list0), and leaves out a field that holds its default, as AMQP allows; the
 * pure-Python AMQP stack of azure-servicebus 7.9 and later reads performatives by position, fails on a
 * short list, and takes a missing field for None (7.14's Session._get_next_output_handle compares its
 * handle count with the begin's handle_max: None fails every link). Service Bus writes them in full.
 */
export function writeEveryPerformativeField(connection: Connection): void {
  if (fullConnections.has(connection)) return;
  fullConnections.add(connection);
  const internals = connection as unknown as ConnectionInternals;
  const write = internals._write_frame.bind(connection);
  internals._write_frame = (channel, frame, payload) => write(channel, frame && padded(frame), payload);
}

function layoutOf(frame: Performative): PerformativeLayout {
  const prototype = Object.getPrototypeOf(frame) as object;
  let layout = layouts.get(prototype);
  if (!layout) {
    // rhea defines each field as an accessor on the composite's prototype, in the performative's order.
    const names = Object.entries(Object.getOwnPropertyDescriptors(prototype))
      .filter(([, field]) => field.get)
      .map(([name]) => name);
    const specDefaults = SPEC_DEFAULTS[frame.constructor.toString().split("#")[0] ?? ""] ?? {};
    const defaults = Object.entries(specDefaults).map(([name, value]) => ({
      index: names.indexOf(name),
      name,
      value,
    }));
    layout = {
      count: names.length,
      defaults: defaults.filter((field) => field.index >= 0),
      errorIndex: names.indexOf("error"),
    };
    layouts.set(prototype, layout);
  }
  return layout;
}

/** Not set, or set to an AMQP null (rhea's setters turn undefined into one). */
const isUnset = (field: unknown) =>
  field === undefined ||
  field === null ||
  (field as { type?: { typecode?: number } }).type?.typecode === NULL_TYPECODE;

function padded(frame: Performative): Performative {
  const { count, defaults, errorIndex } = layoutOf(frame);
  const complete =
    frame.value.length >= count &&
    !frame.value.includes(undefined) &&
    defaults.every(({ index }) => !isUnset(frame.value[index])) &&
    (errorIndex < 0 || fullError(frame.value[errorIndex]) === frame.value[errorIndex]);
  if (complete) return frame;
  // A copy: rhea keeps its own performatives (a link's attach, a session's begin) and reuses them.
  const copy = new frame.constructor(Array.from({ length: count }, (_, i) => frame.value[i]));
  const fields = copy as unknown as Record<string, unknown>;
  for (const { index, name, value } of defaults) {
    if (isUnset(copy.value[index])) fields[name] = value; // rhea's setter gives it the field's AMQP type
  }
  for (let i = 0; i < count; i++) copy.value[i] ??= amqpNull();
  if (errorIndex >= 0) copy.value[errorIndex] = fullError(copy.value[errorIndex]);
  return copy;
}

/** An AMQP error as rhea builds it: a described list (descriptor 0x1d) of the fields it was given. */
interface ErrorList {
  descriptor?: { value?: unknown };
  value?: unknown[];
}
const ERROR_DESCRIPTOR = 0x1d;
const ERROR_FIELD_COUNT = 3; // condition, description, info (part 2.8.14)

/**
 * The error with all three of its fields, description and info null where unset. rhea writes only the
 * fields given, and an error is mostly a condition and a description; 7.14 for Python reads info by
 * position (frame[0][2] in Connection._incoming_close, error_info[0][2] in the sender's and the
 * management link's rejected outcome) and fails on a shorter list. Anything else is returned as it is.
 */
function fullError<T>(error: T): T {
  const list = error as ErrorList | undefined;
  if (list?.descriptor?.value !== ERROR_DESCRIPTOR || !Array.isArray(list.value)) return error;
  if (list.value.length >= ERROR_FIELD_COUNT) return error;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(list) as object) as ErrorList, list);
  copy.value = Array.from({ length: ERROR_FIELD_COUNT }, (_, i) => list.value?.[i] ?? amqpNull());
  return copy as T;
}
