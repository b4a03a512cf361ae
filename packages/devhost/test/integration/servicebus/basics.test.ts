/**
 * Connecting, sending and receiving through the real @azure/service-bus client: the connection
 * string, single and batch sends, peekLock and receiveAndDelete, message properties, CBS with SAS
 * checks, and unknown entities.
 */
import { createHmac } from "node:crypto";
import { createServer } from "node:net";
import { isServiceBusError, ServiceBusClient, type ServiceBusError } from "@azure/service-bus";
import { create_container, type AmqpError } from "rhea";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceBus, type ServiceBusFixture } from "../../support/servicebus";

let sb: ServiceBusFixture;

beforeAll(async () => {
  sb = await startServiceBus({
    orders: { LockDuration: "PT30S", MaxDeliveryCount: 5 },
    batches: {},
    rad: {},
    props: {},
  });
});
afterAll(async () => {
  await sb?.stop();
});

/** Runs `operation`, expecting it to fail with a ServiceBusError; returns the error and how long it took. */
async function failure(operation: () => Promise<unknown>): Promise<{ error: ServiceBusError; ms: number }> {
  const started = Date.now();
  try {
    await operation();
  } catch (error) {
    if (!isServiceBusError(error)) throw error;
    return { error, ms: Date.now() - started };
  }
  throw new Error("expected the operation to fail");
}

describe("connection string", () => {
  it("is the official emulator's shape, with the bound port", () => {
    expect(sb.emulator.port).toBeGreaterThan(0);
    expect(sb.emulator.connectionString).toBe(
      `Endpoint=sb://127.0.0.1:${sb.emulator.port};SharedAccessKeyName=RootManageSharedAccessKey;` +
        "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true",
    );
  });
});

describe("send and receive", () => {
  it("sends one message, receives it peek-locked, completes it", async () => {
    const sender = sb.client.createSender("orders");
    const receiver = sb.client.createReceiver("orders");
    await sender.sendMessages({
      body: { orderId: "ORD-1" },
      messageId: "ORD-1",
      contentType: "application/json",
    });

    const asked = Date.now();
    const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5_000 });
    const got = Date.now();
    expect(message?.body).toEqual({ orderId: "ORD-1" });
    expect(message?.messageId).toBe("ORD-1");
    expect(message?.deliveryCount).toBe(0); // the JS SDK shows the raw AMQP count: 0 on first delivery
    expect(message?.lockToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(message?.sequenceNumber?.toNumber()).toBeGreaterThan(0);
    const lockedUntil = message?.lockedUntilUtc?.getTime() ?? 0;
    expect(lockedUntil).toBeGreaterThanOrEqual(asked + 30_000); // LockDuration PT30S from the delivery
    expect(lockedUntil).toBeLessThanOrEqual(got + 30_000);
    expect(sb.emulator.queueCounts("orders")).toMatchObject({ active: 1, locked: 1 });

    await receiver.completeMessage(message!);
    expect(sb.emulator.queueCounts("orders")).toMatchObject({ active: 0, locked: 0 });
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 })).toHaveLength(0);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("sends an array and a ServiceBusMessageBatch, delivered in order", async () => {
    const sender = sb.client.createSender("batches");
    await sender.sendMessages([{ body: "a" }, { body: "b" }, { body: "c" }]);
    const batch = await sender.createMessageBatch();
    expect(batch.maxSizeInBytes).toBe(256 * 1024); // from the emulator's max_message_size
    for (const body of ["d", "e"]) expect(batch.tryAddMessage({ body })).toBe(true);
    await sender.sendMessages(batch);

    const receiver = sb.client.createReceiver("batches");
    const received = [];
    while (received.length < 5) {
      const got = await receiver.receiveMessages(5 - received.length, { maxWaitTimeInMs: 2_000 });
      if (got.length === 0) break;
      received.push(...got);
    }
    expect(received.map((m) => m.body)).toEqual(["a", "b", "c", "d", "e"]);
    const sequence = received.map((m) => m.sequenceNumber!.toNumber());
    expect([...sequence].sort((x, y) => x - y)).toEqual(sequence);
    expect(new Set(received.map((m) => m.messageId)).size).toBe(5); // the broker stamps missing MessageIds
    for (const m of received) await receiver.completeMessage(m);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("receives only as many messages as asked, leaving the rest unlocked", async () => {
    const sender = sb.client.createSender("batches");
    await sender.sendMessages([{ body: 1 }, { body: 2 }, { body: 3 }]);
    const receiver = sb.client.createReceiver("batches");
    const [first, ...rest] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(rest).toHaveLength(0);
    expect(first?.body).toBe(1);
    expect(sb.emulator.queueCounts("batches")).toMatchObject({ active: 3, locked: 1 });
    const others = await receiver.receiveMessages(2, { maxWaitTimeInMs: 2_000 });
    expect(others.map((m) => m.body)).toEqual([2, 3]);
    for (const m of [first!, ...others]) await receiver.completeMessage(m);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("receiveAndDelete removes messages on delivery, without lock tokens", async () => {
    const sender = sb.client.createSender("rad");
    await sender.sendMessages([{ body: "x" }, { body: "y" }]);
    const receiver = sb.client.createReceiver("rad", { receiveMode: "receiveAndDelete" });
    const got = await receiver.receiveMessages(2, { maxWaitTimeInMs: 2_000 });
    expect(got.map((m) => m.body)).toEqual(["x", "y"]);
    expect(got.every((m) => m.lockToken === undefined)).toBe(true);
    expect(sb.emulator.queueCounts("rad")).toMatchObject({ active: 0, locked: 0 });
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("carries message properties and application properties unchanged", async () => {
    const sender = sb.client.createSender("props");
    await sender.sendMessages({
      body: { nested: { n: 1, list: [1, "two"] } },
      messageId: "m-1",
      correlationId: "c-1",
      subject: "Scientist",
      contentType: "application/json",
      replyTo: "status-demo",
      to: "someone",
      timeToLive: 120_000,
      applicationProperties: { kind: "order", attempt: 3, urgent: true },
    });
    const receiver = sb.client.createReceiver("props", { receiveMode: "receiveAndDelete" });
    const [m] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(m).toMatchObject({
      body: { nested: { n: 1, list: [1, "two"] } },
      messageId: "m-1",
      correlationId: "c-1",
      subject: "Scientist",
      contentType: "application/json",
      replyTo: "status-demo",
      to: "someone",
      timeToLive: 120_000,
      applicationProperties: { kind: "order", attempt: 3, urgent: true },
    });
    expect(m?.expiresAtUtc?.getTime()).toBe((m?.enqueuedTimeUtc?.getTime() ?? 0) + 120_000);
    await Promise.all([sender.close(), receiver.close()]);
  });

  it("accepts entity names case-insensitively, as Service Bus does", async () => {
    const sender = sb.client.createSender("ORDERS");
    await sender.sendMessages({ body: "upper" });
    const receiver = sb.client.createReceiver("Orders", { receiveMode: "receiveAndDelete" });
    const [m] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(m?.body).toBe("upper");
    await Promise.all([sender.close(), receiver.close()]);
  });
});

describe("authentication (CBS put-token with SAS)", () => {
  // The SDK treats UnauthorizedAccess as retryable (rotated keys), 3 times 30 s by default, against real
  // Service Bus too; without retries, the refusal itself must surface at once.
  const noRetries = { retryOptions: { maxRetries: 0 } };

  it("refuses a wrong key with UnauthorizedAccess, fast", async () => {
    const wrong = sb.emulator.connectionString.replace(
      "SharedAccessKey=SAS_KEY_VALUE",
      "SharedAccessKey=WRONG",
    );
    const client = new ServiceBusClient(wrong, noRetries);
    try {
      const { error, ms } = await failure(() => client.createSender("orders").sendMessages({ body: 1 }));
      expect(error.code).toBe("UnauthorizedAccess");
      expect(error.message).toMatch(/InvalidSignature/);
      expect(ms).toBeLessThan(5_000); // refused, not timed out (the SDK's operation timeout is 60 s)
      const receiving = await failure(() => client.createReceiver("orders").receiveMessages(1));
      expect(receiving.error.code).toBe("UnauthorizedAccess");
    } finally {
      await client.close();
    }
    expect(sb.emulator.queueCounts("orders").active).toBe(0);
  });

  it("refuses an unknown key name", async () => {
    const wrong = sb.emulator.connectionString.replace("RootManageSharedAccessKey", "SomeOtherRule");
    const client = new ServiceBusClient(wrong, noRetries);
    try {
      const { error } = await failure(() => client.createSender("orders").sendMessages({ body: 1 }));
      expect(error.code).toBe("UnauthorizedAccess");
    } finally {
      await client.close();
    }
  });

  it("accepts a pre-made SAS token for its entity, and refuses it expired or for another entity", async () => {
    const endpoint = `sb://127.0.0.1:${sb.emulator.port}`;
    const token = (resource: string, expiresInSeconds: number) => {
      const sr = encodeURIComponent(resource);
      const se = Math.floor(Date.now() / 1000) + expiresInSeconds;
      const sig = createHmac("sha256", "SAS_KEY_VALUE").update(`${sr}\n${se}`).digest("base64");
      const sas = `SharedAccessSignature sr=${sr}&sig=${encodeURIComponent(sig)}&se=${se}&skn=RootManageSharedAccessKey`;
      return `Endpoint=${endpoint};SharedAccessSignature=${sas};UseDevelopmentEmulator=true`;
    };
    const valid = new ServiceBusClient(token(`${endpoint}/props`, 3600), noRetries);
    const expired = new ServiceBusClient(token(`${endpoint}/props`, -60), noRetries);
    try {
      await valid.createSender("props").sendMessages({ body: "signed" });
      const receiver = valid.createReceiver("props", { receiveMode: "receiveAndDelete" });
      expect((await receiver.peekMessages(1))[0]?.body).toBe("signed"); // $management is below the entity
      expect((await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 }))[0]?.body).toBe("signed");
      const elsewhere = await failure(() => valid.createSender("orders").sendMessages({ body: 1 }));
      expect(elsewhere.error.code).toBe("UnauthorizedAccess");
      expect(elsewhere.error.message).toMatch(/InvalidAudience/);
      const late = await failure(() => expired.createSender("props").sendMessages({ body: 1 }));
      expect(late.error.code).toBe("UnauthorizedAccess");
      expect(late.error.message).toMatch(/ExpiredToken/);
    } finally {
      await Promise.all([valid.close(), expired.close()]);
    }
  });

  it("refuses a link attached without any put-token", async () => {
    const connection = create_container().connect({
      host: "127.0.0.1",
      port: sb.emulator.port,
      reconnect: false,
      username: "anonymous",
    });
    try {
      const error = await new Promise<AmqpError | undefined>((resolve) => {
        const sender = connection.open_sender("orders");
        sender.on("sender_error", () => resolve(sender.error as AmqpError | undefined));
      });
      expect(error?.condition).toBe("amqp:unauthorized-access");
    } finally {
      connection.close();
    }
  });

  it("accepts a custom key configured on the emulator", async () => {
    const custom = await startServiceBus({ q: {} }, { sasKeyName: "app", sasKey: "s3cret" });
    try {
      expect(custom.emulator.connectionString).toContain("SharedAccessKeyName=app;SharedAccessKey=s3cret;");
      const sender = custom.client.createSender("q");
      await sender.sendMessages({ body: "ok" });
      expect(custom.emulator.queueCounts("q").active).toBe(1);
    } finally {
      await custom.stop();
    }
  });
});

describe("unknown entity", () => {
  it("fails senders, receivers, subscribe and $management with MessagingEntityNotFound, fast", async () => {
    const send = await failure(() => sb.client.createSender("no-such-queue").sendMessages({ body: 1 }));
    expect(send.error.code).toBe("MessagingEntityNotFound");
    expect(send.error.message).toContain("no-such-queue");
    expect(send.ms).toBeLessThan(5_000);

    const receive = await failure(() => sb.client.createReceiver("no-such-queue").receiveMessages(1));
    expect(receive.error.code).toBe("MessagingEntityNotFound");

    const peek = await failure(() => sb.client.createReceiver("no-such-queue").peekMessages(1));
    expect(peek.error.code).toBe("MessagingEntityNotFound");

    const schedule = await failure(() =>
      sb.client.createSender("no-such-queue").scheduleMessages({ body: 1 }, new Date(Date.now() + 60_000)),
    );
    expect(schedule.error.code).toBe("MessagingEntityNotFound");

    const receiver = sb.client.createReceiver("no-such-queue");
    const reported = await new Promise<unknown>((resolve) => {
      receiver.subscribe({
        processMessage: async () => undefined,
        processError: async (args) => resolve(args.error),
      });
    });
    await receiver.close();
    expect(isServiceBusError(reported) && reported.code).toBe("MessagingEntityNotFound");
  });
});

describe("stop()", () => {
  it("returns promptly with clients still connected, and frees the port", async () => {
    const other = await startServiceBus({ q: {} });
    const receiver = other.client.createReceiver("q");
    await other.client.createSender("q").sendMessages({ body: "left behind" });
    await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 }); // a locked message and open links
    const port = other.emulator.port;
    const started = Date.now();
    await other.emulator.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    await other.client.close();
    const server = createServer();
    await new Promise<void>((resolve, reject) =>
      server.once("error", reject).listen(port, "127.0.0.1", resolve),
    );
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
