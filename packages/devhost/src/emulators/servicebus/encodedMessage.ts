/**
 * A message kept as its sender encoded it. The broker reads a few fields (message-id, ttl, scheduled
 * enqueue time), changes a few (a stamped message-id; application properties on abandon, defer and
 * dead-letter) and writes its own header and annotations on delivery; every other section goes out
 * byte for byte as it came in. Decoding into JavaScript values and encoding again would change AMQP
 * types: rhea reads int and uint, long and ulong alike as numbers and writes a positive number back
 * as a uint, and a uuid as binary; a .NET receiver then gets a uint where an int was sent.
 */
import { types, type Typed } from "rhea";
import type { SqlValue, SystemPropertyName } from "./sqlFilter";

/** The parts of rhea's codec that its typings leave out. */
interface RheaCodec {
  Reader: new (buffer: Buffer) => { position: number; read(): Typed; remaining(): number };
  Writer: new () => { write(value: Typed): void; toBuffer(): Buffer };
  List32(items: Typed[]): Typed;
  Map32(items: Typed[]): Typed;
  Null(): Typed;
  described(descriptor: Typed, value: Typed): Typed;
  wrap_ulong(value: number): Typed;
  wrap_boolean(value: boolean): Typed;
  wrap_ubyte(value: number): Typed;
  wrap_uint(value: number): Typed;
  wrap_string(value: string): Typed;
  wrap_symbol(value: string): Typed;
  wrap(value: unknown): Typed;
  unwrap(value: unknown): unknown;
}
const codec = types as unknown as RheaCodec;

/** Section descriptors (AMQP 1.0 part 3.2), numeric and symbolic. */
const SECTIONS = {
  header: 0x70,
  deliveryAnnotations: 0x71,
  messageAnnotations: 0x72,
  properties: 0x73,
  applicationProperties: 0x74,
  data: 0x75,
  sequence: 0x76,
  value: 0x77,
  footer: 0x78,
} as const;
type SectionKind = keyof typeof SECTIONS;
const SYMBOLIC: Record<string, SectionKind> = {
  "amqp:header:list": "header",
  "amqp:delivery-annotations:map": "deliveryAnnotations",
  "amqp:message-annotations:map": "messageAnnotations",
  "amqp:properties:list": "properties",
  "amqp:application-properties:map": "applicationProperties",
  "amqp:data:binary": "data",
  "amqp:amqp-sequence:list": "sequence",
  "amqp:value:*": "value",
  "amqp:footer:map": "footer",
};
const BY_CODE = new Map<number, SectionKind>(
  Object.entries(SECTIONS).map(([kind, code]) => [code, kind as SectionKind]),
);

/** Field positions in the header and properties lists. */
const HEADER = { durable: 0, priority: 1, ttl: 2 } as const;
const PROPERTIES = { messageId: 0 } as const;
/** Where each system property a subscription rule reads or sets sits in the properties list (part 3.2.4). */
const SYSTEM_PROPERTY_FIELDS: Record<SystemPropertyName, number> = {
  MessageId: 0,
  To: 2,
  Label: 3, // subject
  ReplyTo: 4,
  CorrelationId: 5,
  ContentType: 6,
  SessionId: 10, // group-id
  ReplyToSessionId: 12, // reply-to-group-id
};

export class MessageDecodeError extends Error {
  override name = "MessageDecodeError";
}

/** What the broker writes into a delivered message. */
export interface BrokerStamp {
  deliveryCount: number;
  /** The TTL in force, in ms; undefined to send none. */
  timeToLiveMs: number | undefined;
  /** Broker annotations (x-opt-*), already typed; they replace the sender's of the same name. */
  annotations: Record<string, Typed>;
  /** Delivery annotations for this hop (the sender's never travel on). */
  deliveryAnnotations?: Record<string, Typed>;
}

interface Sections {
  /** The sender's header fields, as typed values (its delivery-count is the broker's to set). */
  header: Typed[];
  /** The sender's message annotations as alternating typed keys and values. */
  annotations: Typed[];
  properties: Buffer | undefined;
  applicationProperties: Buffer | undefined;
  /** Every body section (data, amqp-sequence, amqp-value) and the footer, in order. */
  rest: Buffer[];
}

export class EncodedMessage {
  private constructor(private readonly sections: Sections) {}

  /** Splits an encoded message into its sections. Delivery annotations are for one hop and are dropped. */
  static decode(encoded: Buffer): EncodedMessage {
    const sections: Sections = {
      header: [],
      annotations: [],
      properties: undefined,
      applicationProperties: undefined,
      rest: [],
    };
    const reader = new codec.Reader(encoded);
    try {
      while (reader.remaining() > 0) {
        const start = reader.position;
        const section = reader.read();
        const bytes = encoded.subarray(start, reader.position);
        const kind = sectionKind(section);
        if (kind === "header") sections.header = listItems(section);
        else if (kind === "messageAnnotations") sections.annotations = mapItems(section);
        else if (kind === "properties") sections.properties = bytes;
        else if (kind === "applicationProperties") sections.applicationProperties = bytes;
        else if (kind !== "deliveryAnnotations") sections.rest.push(bytes);
      }
    } catch (error) {
      if (error instanceof MessageDecodeError) throw error;
      throw new MessageDecodeError(`malformed AMQP message: ${String(error)}`);
    }
    return new EncodedMessage(sections);
  }

  /** The message-id as rhea decodes it (string, number, or Buffer for uuid and binary ids). */
  get messageId(): unknown {
    const properties = this.sections.properties;
    if (!properties) return undefined;
    return codec.unwrap(listItems(new codec.Reader(properties).read())[PROPERTIES.messageId]) ?? undefined;
  }

  /** The message-id as the sender typed it (a correlation-id that answers it keeps the type). */
  get typedMessageId(): Typed | undefined {
    const properties = this.sections.properties;
    if (!properties) return undefined;
    const id = listItems(new codec.Reader(properties).read())[PROPERTIES.messageId];
    return id && codec.unwrap(id) != null ? id : undefined;
  }

  /** The header's ttl in ms, if the sender set one. */
  get timeToLiveMs(): number | undefined {
    const ttl = codec.unwrap(this.sections.header[HEADER.ttl]);
    return typeof ttl === "number" ? ttl : undefined;
  }

  /** A message annotation's value, decoded. */
  annotation(name: string): unknown {
    const items = this.sections.annotations;
    for (let i = 0; i + 1 < items.length; i += 2) {
      if (codec.unwrap(items[i]) === name) return codec.unwrap(items[i + 1]);
    }
    return undefined;
  }

  /**
   * An amqp-value body that is a map, as key -> value with each value still typed as the sender wrote
   * it ({} for any other body). A $management request is one: its properties-to-modify must reach the
   * message with their types, which rhea's decoding loses.
   */
  typedValueMap(): Record<string, Typed> {
    for (const bytes of this.sections.rest) {
      const section = new codec.Reader(bytes).read();
      if (sectionKind(section) === "value") return typedMapEntries(section) ?? {};
    }
    return {};
  }

  /**
   * The body as text, for inspection: a data section's bytes as UTF-8 (the Service Bus SDKs send a JSON body so),
   * or an amqp-value string; undefined for any other body (several sections, a sequence, a non-string value).
   */
  bodyText(): string | undefined {
    if (this.sections.rest.length !== 1) return undefined;
    const section = new codec.Reader(this.sections.rest[0]!).read();
    const kind = sectionKind(section);
    const value = codec.unwrap(section);
    if (kind === "data" && Buffer.isBuffer(value)) return value.toString("utf8");
    if (kind === "value" && typeof value === "string") return value;
    return undefined;
  }

  /** The application properties, decoded (for inspection; the message keeps its own encoding). */
  applicationProperties(): Record<string, unknown> {
    const bytes = this.sections.applicationProperties;
    if (!bytes) return {};
    const items = mapItems(new codec.Reader(bytes).read());
    const decoded: Record<string, unknown> = {};
    for (let i = 0; i + 1 < items.length; i += 2)
      decoded[String(codec.unwrap(items[i]))] = codec.unwrap(items[i + 1]);
    return decoded;
  }

  /** The system properties a subscription rule can read, decoded (absent ones left out). */
  systemProperties(): Partial<Record<SystemPropertyName, unknown>> {
    const properties = this.sections.properties;
    if (!properties) return {};
    const fields = listItems(new codec.Reader(properties).read());
    const decoded: Partial<Record<SystemPropertyName, unknown>> = {};
    for (const [name, at] of Object.entries(SYSTEM_PROPERTY_FIELDS)) {
      const value = fields[at] === undefined ? undefined : codec.unwrap(fields[at]);
      if (value !== undefined && value !== null) decoded[name as SystemPropertyName] = value;
    }
    return decoded;
  }

  /**
   * The same message with these system properties set, as a rule action's `SET sys.X = ...` sets them:
   * as text (content-type is a symbol on the wire), or cleared by null.
   */
  withSystemProperties(changes: Partial<Record<SystemPropertyName, SqlValue>>): EncodedMessage {
    const entries = Object.entries(changes) as [SystemPropertyName, SqlValue][];
    if (entries.length === 0) return this;
    const fields = this.sections.properties
      ? [...listItems(new codec.Reader(this.sections.properties).read())]
      : [];
    for (const [name, value] of entries) {
      const at = SYSTEM_PROPERTY_FIELDS[name];
      if (value === null) fields[at] = codec.Null();
      else if (name === "ContentType") fields[at] = codec.wrap_symbol(String(value));
      else fields[at] = codec.wrap_string(String(value));
    }
    return new EncodedMessage({ ...this.sections, properties: encodeSection("properties", list(fields)) });
  }

  /** The same message without these application properties (a rule action's REMOVE). */
  withoutApplicationProperties(names: Iterable<string>): EncodedMessage {
    const removed = new Set(names);
    const bytes = this.sections.applicationProperties;
    if (removed.size === 0 || !bytes) return this;
    const items = mapItems(new codec.Reader(bytes).read());
    const kept: Typed[] = [];
    for (let i = 0; i + 1 < items.length; i += 2) {
      if (!removed.has(String(codec.unwrap(items[i])))) kept.push(items[i] as Typed, items[i + 1] as Typed);
    }
    return new EncodedMessage({
      ...this.sections,
      applicationProperties: encodeSection("applicationProperties", codec.Map32(kept)),
    });
  }

  /** The same message with this message-id (Service Bus stamps one when the sender set none). */
  withMessageId(messageId: string): EncodedMessage {
    const fields = this.sections.properties
      ? listItems(new codec.Reader(this.sections.properties).read())
      : [];
    const updated = [...fields];
    updated[PROPERTIES.messageId] = codec.wrap_string(messageId);
    return new EncodedMessage({ ...this.sections, properties: encodeSection("properties", list(updated)) });
  }

  /**
   * The same message with these application properties set (values may be typed already, as a
   * disposition's properties-to-modify are, or plain values for rhea to type). The properties not
   * named keep their encoding; a null or undefined value changes nothing.
   */
  withApplicationProperties(changes: Record<string, unknown>): EncodedMessage {
    const names = Object.keys(changes).filter((name) => codec.unwrap(changes[name]) != null);
    if (names.length === 0) return this;
    const bytes = this.sections.applicationProperties;
    const items = bytes ? [...mapItems(new codec.Reader(bytes).read())] : [];
    for (const name of names) {
      const value = codec.wrap(changes[name]);
      const at = items.findIndex((item, i) => i % 2 === 0 && codec.unwrap(item) === name);
      if (at >= 0) items[at + 1] = value;
      else items.push(codec.wrap_string(name), value);
    }
    return new EncodedMessage({
      ...this.sections,
      applicationProperties: encodeSection("applicationProperties", codec.Map32(items)),
    });
  }

  /** The message as a receiver gets it: the broker's header and annotations, the sender's bytes for the rest. */
  encode(stamp: BrokerStamp): Buffer {
    const sender = this.sections.header;
    const header = [
      sender[HEADER.durable] ?? codec.Null(),
      sender[HEADER.priority] ?? codec.Null(),
      stamp.timeToLiveMs === undefined ? codec.Null() : codec.wrap_uint(stamp.timeToLiveMs),
      codec.Null(), // first-acquirer: not tracked
      codec.wrap_uint(stamp.deliveryCount),
    ];
    const annotations: Typed[] = [];
    const own = this.sections.annotations;
    for (let i = 0; i + 1 < own.length; i += 2) {
      const key = own[i] as Typed;
      if (!(String(codec.unwrap(key)) in stamp.annotations)) annotations.push(key, own[i + 1] as Typed);
    }
    for (const [key, value] of Object.entries(stamp.annotations))
      annotations.push(codec.wrap_symbol(key), value);
    const parts = [encodeSection("header", list(header))];
    const forThisHop = Object.entries(stamp.deliveryAnnotations ?? {});
    if (forThisHop.length > 0) {
      const items = forThisHop.flatMap(([key, value]) => [codec.wrap_symbol(key), value]);
      parts.push(encodeSection("deliveryAnnotations", codec.Map32(items)));
    }
    parts.push(encodeSection("messageAnnotations", codec.Map32(annotations)));
    if (this.sections.properties) parts.push(this.sections.properties);
    if (this.sections.applicationProperties) parts.push(this.sections.applicationProperties);
    parts.push(...this.sections.rest);
    return Buffer.concat(parts);
  }
}

/** A typed AMQP map as key -> typed value; undefined when the value is not a map. */
export function typedMapEntries(value: unknown): Record<string, Typed> | undefined {
  const typed = value as Partial<Typed> | null | undefined;
  if (!typed?.type || !/^Map/.test(typed.type.name) || !Array.isArray(typed.value)) return undefined;
  const items = typed.value as Typed[];
  const entries: Record<string, Typed> = {};
  for (let i = 0; i + 1 < items.length; i += 2) entries[String(codec.unwrap(items[i]))] = items[i + 1]!;
  return entries;
}

function sectionKind(section: Typed): SectionKind {
  const descriptor = codec.unwrap(section.descriptor);
  const kind = typeof descriptor === "number" ? BY_CODE.get(descriptor) : SYMBOLIC[String(descriptor)];
  if (!kind) throw new MessageDecodeError(`unknown message section ${String(descriptor)}`);
  return kind;
}

function listItems(section: Typed): Typed[] {
  return Array.isArray(section.value) ? (section.value as Typed[]) : [];
}

function mapItems(section: Typed): Typed[] {
  return Array.isArray(section.value) ? (section.value as Typed[]) : [];
}

function list(items: Typed[]): Typed {
  return codec.List32(Array.from(items, (item) => item ?? codec.Null())); // fills holes, which map() skips
}

function encodeSection(kind: SectionKind, value: Typed): Buffer {
  const writer = new codec.Writer();
  writer.write(codec.described(codec.wrap_ulong(SECTIONS[kind]), value));
  return writer.toBuffer();
}
