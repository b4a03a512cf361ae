/**
 * EncodedMessage keeps the sender's AMQP encoding: the types a .NET or Python receiver reads back
 * (int, long, uuid...) are the ones sent, through delivery, property changes and a stamped message-id.
 */
import { message as rheaMessage, types, type Message, type Typed } from "rhea";
import { describe, expect, it } from "vitest";
import { EncodedMessage } from "../../src/emulators/servicebus/encodedMessage";

const reader = types as unknown as {
  Reader: new (buffer: Buffer) => { read(): Typed; remaining(): number };
  unwrap(value: unknown): unknown;
};
const UUID = Buffer.from("0f8fad5bd9cb469fa16570867728950e", "hex");

/** Each section of an encoded message: descriptor code -> its typed value. */
function sections(encoded: Buffer): Map<number, Typed> {
  const found = new Map<number, Typed>();
  const r = new reader.Reader(encoded);
  while (r.remaining() > 0) {
    const section = r.read();
    found.set(Number(reader.unwrap(section.descriptor)), section);
  }
  return found;
}

/** A map section's entries: key -> [AMQP type name, decoded value]. */
function typedEntries(section: Typed | undefined): Record<string, [string, unknown]> {
  const items = (section?.value ?? []) as Typed[];
  const entries: Record<string, [string, unknown]> = {};
  for (let i = 0; i + 1 < items.length; i += 2) {
    const value = items[i + 1] as Typed;
    entries[String(reader.unwrap(items[i]))] = [value.type.name, reader.unwrap(value)];
  }
  return entries;
}

function sent(extra: Partial<Message> = {}): Buffer {
  return rheaMessage.encode({
    durable: true,
    priority: 7,
    ttl: 60_000,
    delivery_count: 9,
    message_id: "m-1",
    subject: "s",
    message_annotations: { "x-opt-partition-key": "p", "x-opt-sequence-number": types.wrap_long(999) },
    delivery_annotations: { "x-hop": "dropped" },
    application_properties: {
      int: types.wrap_int(42),
      long: types.wrap_long(1099511627776),
      uuid: types.wrap_uuid(UUID),
      short: types.wrap_short(-3),
      text: "t",
    },
    body: rheaMessage.data_section(Buffer.from([1, 2, 3])),
    ...extra,
  } as unknown as Message);
}

const stamp = {
  deliveryCount: 2,
  timeToLiveMs: 30_000,
  annotations: { "x-opt-sequence-number": types.wrap_long(5) },
};

describe("EncodedMessage", () => {
  it("reads the message-id, TTL and annotations the broker acts on", () => {
    const message = EncodedMessage.decode(sent());
    expect(message.messageId).toBe("m-1");
    expect(message.timeToLiveMs).toBe(60_000);
    expect(message.annotation("x-opt-partition-key")).toBe("p");
    expect(message.applicationProperties()).toMatchObject({ int: 42, text: "t" });
  });

  it("delivers the sender's sections byte for byte, under the broker's header and annotations", () => {
    const original = sections(sent());
    const delivered = sections(EncodedMessage.decode(sent()).encode(stamp));
    expect(delivered.has(0x71)).toBe(false); // delivery annotations are for one hop
    const header = (delivered.get(0x70)?.value ?? []) as Typed[];
    expect(header.map((field) => reader.unwrap(field))).toEqual([true, 7, 30_000, null, 2]);
    expect(typedEntries(delivered.get(0x72))).toEqual({
      "x-opt-partition-key": ["Str8", "p"],
      "x-opt-sequence-number": [expect.stringMatching(/Long/), 5],
    });
    expect(typedEntries(delivered.get(0x74))).toEqual(typedEntries(original.get(0x74)));
    expect(typedEntries(delivered.get(0x74)).int?.[0]).toMatch(/Int/);
    expect(typedEntries(delivered.get(0x74)).uuid).toEqual(["Uuid", UUID]);
    expect(reader.unwrap(delivered.get(0x75))).toEqual(Buffer.from([1, 2, 3]));
  });

  it("changes only the properties it is given, and keeps the types of the rest", () => {
    const changed = EncodedMessage.decode(sent()).withApplicationProperties({
      text: "changed",
      added: types.wrap_int(-1),
      ignored: null,
    });
    const entries = typedEntries(sections(changed.encode(stamp)).get(0x74));
    expect(entries.text?.[1]).toBe("changed");
    expect(entries.added?.[0]).toMatch(/Int/);
    expect(entries.ignored).toBeUndefined();
    expect(entries.long?.[0]).toMatch(/Long/);
    expect(entries.short?.[0]).toBe("Short");
  });

  it("stamps a message-id into the properties, keeping their other fields", () => {
    const withoutId = EncodedMessage.decode(sent({ message_id: undefined }));
    expect(withoutId.messageId).toBeUndefined();
    const stamped = withoutId.withMessageId("stamped");
    expect(stamped.messageId).toBe("stamped");
    const properties = (sections(stamped.encode(stamp)).get(0x73)?.value ?? []) as Typed[];
    expect(reader.unwrap(properties[3])).toBe("s"); // subject
  });

  it("reads a body as text: a data section's UTF-8 bytes or a string value, and nothing else", () => {
    const json = '{"order":"café"}';
    expect(
      EncodedMessage.decode(sent({ body: rheaMessage.data_section(Buffer.from(json)) })).bodyText(),
    ).toBe(json);
    expect(EncodedMessage.decode(sent({ body: "plain" })).bodyText()).toBe("plain");
    expect(EncodedMessage.decode(sent({ body: 42 })).bodyText()).toBeUndefined();
  });

  it("refuses bytes that are not an AMQP message", () => {
    expect(() => EncodedMessage.decode(Buffer.from([0x00, 0x53, 0x99, 0x40]))).toThrow(
      /unknown message section/,
    );
  });
});
