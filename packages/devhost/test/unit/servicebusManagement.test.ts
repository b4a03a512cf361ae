/**
 * $management answers in the types the .NET client casts them to: arrays for renew-lock's expirations
 * and schedule's sequence numbers, and a symbol for an error condition; and they pass the types of
 * update-disposition's properties-to-modify on to the message.
 */
import { message as rheaMessage, types, type Message, type Typed } from "rhea";
import { describe, expect, it } from "vitest";
import { QUEUE_DEFAULTS } from "../../src/emulators/servicebus";
import { EncodedMessage } from "../../src/emulators/servicebus/encodedMessage";
import { handleManagementRequest } from "../../src/emulators/servicebus/management";
import { encodeForReceiver } from "../../src/emulators/servicebus/wire";
import { MessageQueue } from "../../src/emulators/servicebus/queue";

function queue(): MessageQueue {
  return new MessageQueue({ ...QUEUE_DEFAULTS, name: "q" }, () => undefined);
}

function request(operation: string, body: unknown): Message {
  return { application_properties: { operation: `com.microsoft:${operation}` }, body } as Message;
}

const typeName = (value: unknown) => (value as Typed).type.name;

const reader = types as unknown as { Reader: new (buffer: Buffer) => { read(): Typed; remaining(): number } };

/** A delivered message's application properties: name -> [AMQP type name, value]. */
function applicationPropertyTypes(encoded: Buffer): Record<string, [string, unknown]> {
  return typedSection(encoded, 0x74);
}

/** A delivered message's message annotations: name -> [AMQP type name, value]. */
function messageAnnotations(encoded: Buffer): Record<string, [string, unknown]> {
  return typedSection(encoded, 0x72);
}

function typedSection(encoded: Buffer, descriptor: number): Record<string, [string, unknown]> {
  const r = new reader.Reader(encoded);
  while (r.remaining() > 0) {
    const section = r.read();
    if (Number(types.unwrap(section.descriptor)) !== descriptor) continue;
    const items = section.value as Typed[];
    const entries: Record<string, [string, unknown]> = {};
    for (let i = 0; i + 1 < items.length; i += 2)
      entries[String(types.unwrap(items[i]))] = [items[i + 1]!.type.name, types.unwrap(items[i + 1])];
    return entries;
  }
  return {};
}

describe("$management responses", () => {
  it("answers schedule-message with an array of long", () => {
    const q = queue();
    const encoded = rheaMessage.encode({ message_id: "s-1", body: "later" } as Message);
    const response = handleManagementRequest(
      q,
      request("schedule-message", { messages: [{ message: encoded, "message-id": "s-1" }] }),
    );
    const numbers = (response.body as Record<string, Typed>)["sequence-numbers"]!;
    expect(typeName(numbers)).toMatch(/^Array/);
    expect(types.unwrap(numbers)).toEqual([1]);
    expect(
      (numbers as unknown as { type: unknown; array_constructor?: { typecode: number } }).array_constructor
        ?.typecode,
    ).toBe(0x81);
    q.dispose();
  });

  it("answers renew-lock with an array of timestamp", () => {
    const q = queue();
    q.send(EncodedMessage.decode(rheaMessage.encode({ body: "held" } as Message)));
    const locked = q.receive("peekLock")!;
    // As rhea decodes a request's uuid: its 16 bytes.
    const lockToken = Buffer.from(locked.lockToken!.replace(/-/g, ""), "hex");
    const response = handleManagementRequest(q, request("renew-lock", { "lock-tokens": [lockToken] }));
    const expirations = (response.body as Record<string, Typed>).expirations!;
    expect(typeName(expirations)).toMatch(/^Array/);
    expect(
      (expirations as unknown as { array_constructor?: { typecode: number } }).array_constructor?.typecode,
    ).toBe(0x83);
    q.dispose();
  });

  it("keeps the types of update-disposition's properties-to-modify as the client sent them", () => {
    const q = queue();
    q.send(EncodedMessage.decode(rheaMessage.encode({ body: "deferred" } as Message)));
    const locked = q.receive("peekLock")!;
    const lockToken = Buffer.from(locked.lockToken!.replace(/-/g, ""), "hex");
    // The request as it travels, then as the emulator reads it: decoded by rhea, and typed.
    const encoded = rheaMessage.encode({
      application_properties: { operation: "com.microsoft:update-disposition" },
      body: {
        "lock-tokens": [types.wrap_uuid(lockToken)],
        "disposition-status": "abandoned",
        "properties-to-modify": { attempt: types.wrap_int(3), small: types.wrap_short(2) },
      },
    } as unknown as Message);
    const response = handleManagementRequest(
      q,
      rheaMessage.decode(encoded) as unknown as Message,
      EncodedMessage.decode(encoded).typedValueMap(),
    );
    expect(types.unwrap(response.application_properties?.statusCode)).toBe(200);
    const again = q.receive("peekLock")!;
    expect(applicationPropertyTypes(encodeForReceiver(again))).toEqual({
      attempt: ["SmallInt", 3], // an int (rhea's decoding alone would write a uint back)
      small: ["Short", 2],
    });
    q.dispose();
  });

  it("peeks a deferred message with x-opt-message-state as an int, and a dead letter without x-opt-deadletter-source", () => {
    const q = queue();
    q.send(EncodedMessage.decode(rheaMessage.encode({ message_id: "d", body: "later" } as Message)));
    q.defer(q.receive("peekLock")!.lockToken!);
    q.send(EncodedMessage.decode(rheaMessage.encode({ message_id: "x", body: "poison" } as Message)));
    q.deadLetter(q.receive("peekLock")!.lockToken!, { reason: "Bad", description: "Not good." });

    const peek = (target: MessageQueue) =>
      handleManagementRequest(
        target,
        request("peek-message", { "from-sequence-number": 1, "message-count": 10 }), // as rhea decodes it
      );
    const [deferred] = (peek(q).body as { messages: { message: Buffer }[] }).messages;
    const state = messageAnnotations(deferred!.message)["x-opt-message-state"];
    expect(state).toEqual(["SmallInt", 1]); // Deferred; .NET casts an int, not a uint
    const [dead] = (peek(q.deadLetterQueue!).body as { messages: { message: Buffer }[] }).messages;
    const application = applicationPropertyTypes(dead!.message);
    expect(application.DeadLetterReason?.[1]).toBe("Bad");
    expect(application.DeadLetterErrorDescription?.[1]).toBe("Not good.");
    expect(messageAnnotations(dead!.message)).not.toHaveProperty("x-opt-deadletter-source");
    q.dispose();
  });

  it("gives an error condition as a symbol", () => {
    const response = handleManagementRequest(queue(), request("no-such-operation", {}));
    const condition = response.application_properties?.errorCondition;
    expect(typeName(condition)).toMatch(/^Sym/);
    expect(types.unwrap(condition)).toBe("amqp:not-implemented");
  });
});
