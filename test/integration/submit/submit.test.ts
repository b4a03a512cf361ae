import net from "node:net";
import { ServiceBusClient, type ServiceBusReceivedMessage } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBusEmulator } from "devhost/emulators";
import { SAMPLE_PAYMENT_LIMIT } from "../../../tools/sampleOrders";
import { emulatorConfigFiles } from "../../../tools/repository";
import { main } from "../../../tools/submit";
import { orderSchema, orderTotal, submissionMessageId } from "../../../src/domain/order";

let emulator: ServiceBusEmulator;
let client: ServiceBusClient;
let cs: string;

beforeAll(async () => {
  emulator = new ServiceBusEmulator({ port: 0, config: emulatorConfigFiles().serviceBus });
  await emulator.start();
  cs = emulator.connectionString;
  client = new ServiceBusClient(cs);
});

afterAll(async () => {
  await client?.close();
  await emulator?.stop();
});

function captureIo(): { log: (l: string) => void; error: (l: string) => void; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { log: (l) => out.push(l), error: (l) => err.push(l), out, err };
}

/**
 * Receives (and deletes) all `count` messages. main() resolves only once the broker has stored every message,
 * so the queue's active count is exact and tells how many to wait for.
 */
async function drain(queue: string, count: number): Promise<ServiceBusReceivedMessage[]> {
  const receiver = client.createReceiver(queue, { receiveMode: "receiveAndDelete" });
  const messages: ServiceBusReceivedMessage[] = [];
  try {
    while (messages.length < count) {
      const batch = await receiver.receiveMessages(count - messages.length, { maxWaitTimeInMs: 5_000 });
      if (batch.length === 0)
        throw new Error(`received ${messages.length} of ${count} messages from ${queue}`);
      messages.push(...batch);
    }
  } finally {
    await receiver.close();
  }
  return messages;
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("npm run submit", () => {
  it("sends --count valid orders to orders, messageId = orderId:fingerprint, in batches", async () => {
    const io = captureIo();
    const code = await main(["--count", "25", "--connection", cs, "--prefix", "T"], io);
    expect(io.err).toEqual([]);
    expect(code).toBe(0);
    expect(io.out.at(-2)).toMatch(/^sent 25 orders to orders \(first T-1, last T-25\) in \d+ ms$/);

    expect(emulator.queueCounts("orders").active).toBe(25);
    const messages = await drain("orders", 25);
    const ids = messages.map((m) => m.messageId);
    expect(new Set(ids).size).toBe(25);
    expect(ids.map((id) => String(id).split(":")[0]).sort()).toEqual(
      Array.from({ length: 25 }, (_, k) => `T-${k + 1}`).sort(),
    );
    for (const message of messages) {
      const order = orderSchema.parse(message.body);
      expect(message.messageId).toBe(submissionMessageId(order));
      expect(message.messageId).toMatch(new RegExp(`^${order.orderId}:[0-9a-f]{16}$`));
      expect(message.contentType).toBe("application/json");
      expect(order.replyTo).toBe("status-demo");
      expect(orderTotal(order)).toBeLessThanOrEqual(SAMPLE_PAYMENT_LIMIT);
    }
  });

  it("--declined 0.2 with --seed makes the expected orders exceed the payment limit, and names them", async () => {
    const argv = ["--count", "25", "--connection", cs, "--prefix", "DC", "--declined", "0.2", "--seed", "7"];
    const io = captureIo();
    expect(await main(argv, io)).toBe(0);
    expect(io.out.join("\n")).toContain("5 of them exceed the payment limit of 10000");
    expect(emulator.queueCounts("orders").active).toBe(25);
    const orders = (await drain("orders", 25)).map((m) => orderSchema.parse(m.body));
    const over = orders.filter((o) => orderTotal(o) > SAMPLE_PAYMENT_LIMIT).map((o) => o.orderId);
    expect(over.sort()).toEqual(["DC-10", "DC-15", "DC-20", "DC-25", "DC-5"]);
  });

  it("sends one message per call with --no-batch; a re-run with the same prefix and seed sends the same orders", async () => {
    const argv = [
      "--count",
      "3",
      "--connection",
      cs,
      "--prefix",
      "NB",
      "--no-batch",
      "--reply-to",
      "status-x1",
      "--seed",
      "7",
    ];
    expect(await main(argv, captureIo())).toBe(0);
    expect(await main(argv, captureIo())).toBe(0);
    // The queue keeps both runs (it has no duplicate detection); the app takes the second as resends: the same
    // MessageId, the same body, hence the same fingerprint.
    expect(emulator.queueCounts("orders").active).toBe(6);
    const messages = await drain("orders", 6);
    const byId = new Map<string, unknown[]>();
    for (const m of messages)
      byId.set(String(m.messageId), [...(byId.get(String(m.messageId)) ?? []), m.body]);
    expect([...byId.keys()].map((id) => id.split(":")[0]).sort()).toEqual(["NB-1", "NB-2", "NB-3"]);
    for (const bodies of byId.values()) expect(bodies).toEqual([bodies[0], bodies[0]]);
    expect(messages.map((m) => (m.body as { replyTo: string }).replyTo)).toEqual(Array(6).fill("status-x1"));
  });

  it("reports a queue that does not exist, naming it", async () => {
    const io = captureIo();
    expect(await main(["--count", "2", "--connection", cs, "--queue", "no-such-queue"], io)).toBe(1);
    expect(io.err.join("\n")).toMatch(/queue "no-such-queue" does not exist/);
  });

  it("reports a refused key as an access problem", async () => {
    const io = captureIo();
    const wrongKey = cs.replace("SharedAccessKey=SAS_KEY_VALUE", "SharedAccessKey=not-the-key");
    expect(await main(["--count", "2", "--connection", wrongKey], io)).toBe(1);
    expect(io.err.join("\n")).toMatch(/access to queue "orders" at .* was refused: .*signature/i);
  });

  it("fails fast with a hint when nothing listens at the endpoint", async () => {
    const port = await closedPort();
    const unreachable = cs.replace(/sb:\/\/127\.0\.0\.1:\d+/, `sb://127.0.0.1:${port}`);
    const io = captureIo();
    expect(await main(["--count", "5", "--connection", unreachable], io)).toBe(1);
    const text = io.err.join("\n");
    expect(text).toContain(`cannot reach Service Bus at sb://127.0.0.1:${port}`);
    expect(text).toContain("Is `npm start` or `npm run emulators` running?");
  }, 10_000);
});
