/**
 * What clients other than @azure/service-bus rely on, checked on the wire with a bare rhea client (the
 * .NET and Python clients themselves run in test/conformance/): the SASL mechanisms offered, CBS
 * replies routed by the reply link's address (or, without a reply-to, by the node), both token types,
 * refused links, the message size limit, and AMQPS.
 */
import { createHmac } from "node:crypto";
import { connect as connectTcp } from "node:net";
import { isServiceBusError } from "@azure/service-bus";
import {
  create_container,
  types,
  type AmqpError,
  type Connection,
  type EventContext,
  type Message,
  type Receiver,
  type Sender,
} from "rhea";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBusEmulator } from "../../../src/emulators/servicebus";
import { makeLoopbackCertificate, opensslVersion } from "../../support/loopbackCertificate";
import { queueConfig, startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({ wire: {}, sizes: {} });
});
afterAll(async () => {
  await sb?.stop();
});

function sasToken(audience: string, key = "SAS_KEY_VALUE"): string {
  const sr = encodeURIComponent(audience);
  const se = Math.floor(Date.now() / 1000) + 3600;
  const sig = createHmac("sha256", key).update(`${sr}\n${se}`).digest("base64");
  return `SharedAccessSignature sr=${sr}&sig=${encodeURIComponent(sig)}&se=${se}&skn=RootManageSharedAccessKey`;
}

function open(options: Record<string, unknown> = {}): Promise<Connection> {
  const connection = create_container().connect({
    host: "127.0.0.1",
    port: sb.emulator.port,
    reconnect: false,
    ...options,
  });
  return new Promise((resolve, reject) => {
    connection.once("connection_open", () => resolve(connection));
    // A failed SASL outcome arrives as an 'error' event, then the disconnect.
    connection.once("error", (error: unknown) => reject(error));
    connection.once("disconnected", (ctx: EventContext) => reject(ctx.error ?? new Error("disconnected")));
  });
}

/** Puts a token on $cbs the way the .NET and Python clients do: the reply link is named by its address. */
async function putToken(
  connection: Connection,
  token: string,
  audience: string,
  type: string,
): Promise<Record<string, unknown>> {
  const replyAddress = `cbs-reply-${Math.random().toString(16).slice(2)}`;
  const requests = connection.open_sender({ target: { address: "$cbs" } });
  const replies = connection.open_receiver({
    source: { address: "$cbs" },
    target: { address: replyAddress },
  });
  const reply = new Promise<Message>((resolve) =>
    replies.once("message", (ctx: EventContext) => resolve(ctx.message!)),
  );
  await new Promise((resolve) => requests.once("sendable", resolve));
  requests.send({
    message_id: "put-1",
    reply_to: replyAddress,
    application_properties: { operation: "put-token", name: audience, type },
    body: token,
  });
  const answer = await reply;
  expect(answer.correlation_id).toBe("put-1");
  return answer.application_properties ?? {};
}

function attachError(
  link: Sender | Receiver,
): Promise<{ error: AmqpError | undefined; attachedTarget: unknown }> {
  return new Promise((resolve) => {
    link.once(link.is_sender() ? "sender_error" : "receiver_error", () => {
      const attach = (link as unknown as { remote: { attach?: { target?: unknown; source?: unknown } } })
        .remote.attach;
      resolve({
        error: link.error as AmqpError | undefined,
        attachedTarget: link.is_sender() ? attach?.target : attach?.source,
      });
    });
  });
}

describe("SASL", () => {
  it("offers MSSBCBS, PLAIN, ANONYMOUS and EXTERNAL, as Service Bus does", async () => {
    const frame = await new Promise<Buffer>((resolve, reject) => {
      const socket = connectTcp(sb.emulator.port, "127.0.0.1", () =>
        socket.write(Buffer.from("AMQP\x03\x01\x00\x00", "latin1")),
      );
      let received = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length > 8 + 8) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on("error", reject);
    });
    // The sasl-mechanisms frame lists them as symbols, in this order.
    const text = frame.toString("latin1");
    const offered = ["MSSBCBS", "PLAIN", "ANONYMOUS", "EXTERNAL"].map((name) => text.indexOf(name));
    expect(offered.every((at) => at > 0)).toBe(true);
    expect([...offered].sort((a, b) => a - b)).toEqual(offered);
  });

  it("lets PLAIN with the SAS key name and key reach every entity without CBS", async () => {
    const connection = await open({ username: "RootManageSharedAccessKey", password: "SAS_KEY_VALUE" });
    try {
      const sender = connection.open_sender("wire");
      await new Promise((resolve) => sender.once("sendable", resolve));
      const accepted = new Promise((resolve) => sender.once("accepted", resolve));
      sender.send({ body: "plain" });
      await accepted;
      expect(sb.emulator.queueCounts("wire").active).toBe(1);
    } finally {
      connection.close();
    }
    const receiver = sb.client.createReceiver("wire", { receiveMode: "receiveAndDelete" });
    expect((await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 }))[0]?.body).toBe("plain");
    await receiver.close();
  });

  it("fails PLAIN with a wrong key", async () => {
    await expect(open({ username: "RootManageSharedAccessKey", password: "wrong" })).rejects.toMatchObject({
      condition: "amqp:unauthorized-access",
    });
  });
});

describe("performatives", () => {
  it("carry every field, as Service Bus writes them (the pure-Python AMQP stack reads them by position)", async () => {
    const connection = await open({ username: "RootManageSharedAccessKey", password: "SAS_KEY_VALUE" });
    try {
      const receiver = connection.open_receiver("wire");
      await new Promise((resolve) => receiver.once("receiver_open", resolve));
      const fields = (performative: unknown) => (performative as { value: unknown[] }).value.length;
      const remote = (endpoint: unknown) => (endpoint as { remote: Record<string, unknown> }).remote;
      expect(fields(remote(connection).open)).toBe(10);
      expect(fields(remote(receiver.session).begin)).toBe(8);
      expect(fields(remote(receiver).attach)).toBe(14);
    } finally {
      connection.close();
    }
  });

  it("carry a value where AMQP has a default, which the pure-Python stack (azure-servicebus 7.14) does not apply", async () => {
    const connection = await open({ username: "RootManageSharedAccessKey", password: "SAS_KEY_VALUE" });
    try {
      const receiver = connection.open_receiver("wire");
      const sender = connection.open_sender("wire");
      await Promise.all([
        new Promise((resolve) => receiver.once("receiver_open", resolve)),
        new Promise((resolve) => sender.once("sendable", resolve)),
      ]);
      type Fields = Record<string, unknown>;
      const remote = (endpoint: unknown) => (endpoint as { remote: Record<string, Fields> }).remote;
      // rhea's performatives read their fields through accessors on the prototype: toMatchObject sees none.
      const expectFields = (performative: Fields | undefined, expected: Fields) =>
        expect(Object.fromEntries(Object.keys(expected).map((name) => [name, performative?.[name]]))).toEqual(
          expected,
        );
      // Service Bus's open: channel-max 4999, idle-time-out 120 s.
      expectFields(remote(connection).open, {
        container_id: "servicebus-emulator",
        max_frame_size: 64 * 1024,
        channel_max: 4999,
        idle_time_out: 120_000,
      });
      // 7.14's Session._get_next_output_handle compares with handle_max: None failed every link.
      expectFields(remote(receiver.session).begin, { handle_max: 255, remote_channel: expect.any(Number) });
      // The attach answering the client's receiver (the emulator sends) and its sender (the emulator receives).
      const settleModes = {
        snd_settle_mode: expect.any(Number),
        rcv_settle_mode: 0,
        incomplete_unsettled: false,
      };
      expectFields(remote(receiver).attach, {
        ...settleModes,
        initial_delivery_count: 0,
        max_message_size: 256 * 1024,
      });
      expectFields(remote(sender).attach, { ...settleModes, max_message_size: 256 * 1024 });

      // An error carries condition, description and info (null): 7.14 reads info by position.
      const errorFields = (error: unknown) => (error as { value: unknown[] }).value.length;
      const rejected = new Promise<Fields>((resolve) =>
        sender.once("rejected", (ctx: EventContext) => resolve(ctx.delivery!.remote_state as Fields)),
      );
      sender.send({ body: Buffer.alloc(300 * 1024) }); // over the Standard tier's 256 KiB
      const outcome = (await rejected) as { value: unknown[] };
      expect(errorFields(outcome.value[0])).toBe(3);
      const refused = connection.open_sender("no-such-queue");
      await attachError(refused);
      expect(errorFields((remote(refused).detach as { value: unknown[] }).value[2])).toBe(3);
    } finally {
      connection.close();
    }
  });

  it("advertise a 64 KiB max-frame-size, so that uamqp (Python) splits a large message into frames", async () => {
    const connection = await open({ username: "RootManageSharedAccessKey", password: "SAS_KEY_VALUE" });
    try {
      const open = (connection as unknown as { remote: { open: { max_frame_size?: number } } }).remote.open;
      expect(open.max_frame_size).toBe(64 * 1024);
      // A message of several frames arrives whole.
      const sender = connection.open_sender("wire");
      await new Promise((resolve) => sender.once("sendable", resolve));
      const accepted = new Promise((resolve) => sender.once("accepted", resolve));
      sender.send({ message_id: "framed", body: Buffer.alloc(200 * 1024, 7) });
      await accepted;
    } finally {
      connection.close();
    }
    const receiver = sb.client.createReceiver("wire", { receiveMode: "receiveAndDelete" });
    const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(message?.messageId).toBe("framed");
    expect(Buffer.from(message?.body as Buffer).equals(Buffer.alloc(200 * 1024, 7))).toBe(true);
    await receiver.close();
  });
});

describe("CBS put-token", () => {
  it("answers on the reply link named by its address, for both token types", async () => {
    const connection = await open({ username: "anonymous" });
    try {
      const audience = `sb://127.0.0.1:${sb.emulator.port}/wire`;
      for (const type of ["servicebus.windows.net:sastoken", "jwt"]) {
        const answer = await putToken(connection, sasToken(audience), audience, type);
        expect(answer["status-code"]).toBe(202);
      }
      const forged = await putToken(connection, sasToken(audience, "not-the-key"), audience, "jwt");
      expect(forged["status-code"]).toBe(401);
      expect(forged["status-description"]).toMatch(/InvalidSignature/);
      const entra = await putToken(connection, "eyJhbGciOi.not-a-sas.token", audience, "jwt");
      expect(entra["status-code"]).toBe(401);
    } finally {
      connection.close();
    }
  });
});

describe("$management", () => {
  it("answers a request without reply-to on the client's receiver from the same node, after settling it", async () => {
    // uamqp (Python) sends no reply-to, and fails an operation whose response beats its settlement.
    const connection = await open({ username: "RootManageSharedAccessKey", password: "SAS_KEY_VALUE" });
    try {
      const node = "wire/$management";
      const requests = connection.open_sender({ target: { address: node } });
      const replies = connection.open_receiver({ source: { address: node }, target: { address: node } });
      const events: string[] = [];
      const reply = new Promise<Message>((resolve) =>
        replies.once("message", (ctx: EventContext) => {
          events.push("response");
          resolve(ctx.message!);
        }),
      );
      await new Promise((resolve) => requests.once("sendable", resolve));
      const delivery = requests.send({
        message_id: 7,
        application_properties: { operation: "com.microsoft:peek-message" },
        body: { "from-sequence-number": types.wrap_long(1), "message-count": types.wrap_int(1) },
      });
      requests.once("settled", () => events.push("settled"));
      const answer = await reply;
      expect(delivery.remote_settled).toBe(true);
      expect(events).toEqual(["settled", "response"]);
      expect(answer.correlation_id).toBe(7);
      expect(answer.application_properties?.statusCode).toBe(204); // nothing to peek
    } finally {
      connection.close();
    }
  });
});

describe("refused links", () => {
  it("answer the attach with a null terminus, then detach with a symbol condition", async () => {
    const connection = await open({ username: "anonymous" });
    try {
      const sender = connection.open_sender("no-such-queue");
      const refused = await attachError(sender);
      expect(refused.error?.condition).toBe("amqp:unauthorized-access");
      // The detach's error, still typed: its condition is a symbol.
      const detach = (
        sender as unknown as { remote: { detach: { value: { value: { type: { name: string } }[] }[] } } }
      ).remote.detach;
      expect(detach.value[2]?.value[0]?.type.name).toMatch(/^Sym/);
      expect(types.unwrap(refused.attachedTarget) ?? null).toBeNull(); // an AMQP null, not an echo
    } finally {
      connection.close();
    }
  });
});

describe("message size", () => {
  it("refuses a message over the Standard tier's 256 KiB with MessageSizeExceeded", async () => {
    const sender = sb.client.createSender("sizes");
    try {
      await expect(sender.sendMessages({ body: Buffer.alloc(390 * 1024) })).rejects.toSatisfy(
        (error: unknown) => isServiceBusError(error) && error.code === "MessageSizeExceeded",
      );
      await sender.sendMessages({ body: Buffer.alloc(200 * 1024) });
      expect(sb.emulator.queueCounts("sizes").active).toBe(1);
    } finally {
      await sender.close();
    }
  });

  it("refuses only the message over the limit when smaller ones travel with it on the same link", async () => {
    const sender = sb.client.createSender("sizes");
    try {
      await sender.sendMessages({ body: "opens the link" });
      const before = sb.emulator.queueCounts("sizes").active;
      // One tick: the emulator settles the four transfers together, the refused one first.
      const outcomes = await Promise.allSettled([
        sender.sendMessages({ body: Buffer.alloc(390 * 1024) }),
        ...[1, 2, 3].map((n) => sender.sendMessages({ body: `small ${n}` })),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled", "fulfilled", "fulfilled"]);
      expect(sb.emulator.queueCounts("sizes").active).toBe(before + 3);
    } finally {
      await sender.close();
    }
  });

  it("takes a larger limit when configured (Premium allows up to 100 MiB)", async () => {
    const premium = await startServiceBus({ big: {} }, { maxMessageSizeBytes: 1024 * 1024 });
    try {
      const sender = premium.client.createSender("big");
      await sender.sendMessages({ body: Buffer.alloc(390 * 1024) });
      expect(premium.emulator.queueCounts("big").active).toBe(1);
      expect((await sender.createMessageBatch()).maxSizeInBytes).toBe(1024 * 1024);
    } finally {
      await premium.stop();
    }
  });
});

describe.skipIf(!opensslVersion())("AMQPS", () => {
  it("serves AMQP over TLS with the given key and certificate, for clients that always use TLS", async () => {
    const certificate = await makeLoopbackCertificate("127.0.0.1");
    const emulator = new ServiceBusEmulator({
      port: 0,
      config: queueConfig({ secure: {} }),
      tls: { key: certificate.key, cert: certificate.cert },
    });
    await emulator.start();
    try {
      expect(emulator.connectionString).not.toMatch(/UseDevelopmentEmulator/); // TLS is the clients' default
      const connection = create_container().connect({
        host: "127.0.0.1",
        port: emulator.port,
        transport: "tls",
        ca: certificate.cert,
        reconnect: false,
        username: "RootManageSharedAccessKey",
        password: "SAS_KEY_VALUE",
      });
      try {
        const sender = connection.open_sender("secure");
        await new Promise((resolve) => sender.once("sendable", resolve));
        const accepted = new Promise((resolve) => sender.once("accepted", resolve));
        sender.send({ body: "over tls" });
        await accepted;
        expect(emulator.queueCounts("secure").active).toBe(1);
      } finally {
        connection.close();
      }
    } finally {
      await emulator.stop();
      certificate.dispose();
    }
  });
});
