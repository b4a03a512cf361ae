import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { ServiceBusClient } from "@azure/service-bus";
import { afterEach, describe, expect, it } from "vitest";
import { isListening } from "../../../src/emulatorPlan";
import { startEmulators } from "../../../src/emulators";
import { APPS_DIR, startTestDevHost, type TestDevHost } from "../../support/devhost";
import { eventually, startServiceBus } from "../../support/servicebus";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const emulatorConnection = (port: number): string =>
  `Endpoint=sb://127.0.0.1:${port};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;`;

// The sample app's emulator config (servicebus-emulator.config.json beside its host.json) has these queues; the
// setting names the file relative to the app root, as an app's local.settings.json would.
const queues = { WORK_QUEUE: "orders", RESULTS_QUEUE: "alerts", FANOUT_QUEUE: "status-demo" };
const SERVICE_BUS_CONFIG = { DEVHOST_SERVICEBUS_CONFIG: "servicebus-emulator.config.json" };

/** The sample app's round trip through the emulator: a message on `orders` comes back on `alerts`, marked done. */
async function expectRoundTrip(connection: string, id: string): Promise<void> {
  const client = new ServiceBusClient(connection);
  try {
    await client.createSender("orders").sendMessages({ body: { id } });
    const receiver = client.createReceiver("alerts", { receiveMode: "receiveAndDelete" });
    const [result] = await eventually(
      async () => {
        const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 });
        return got.length > 0 ? got : undefined;
      },
      { timeoutMs: 10_000, what: "the output message" },
    );
    expect(result?.body).toEqual({ id, done: true });
  } finally {
    await client.close();
  }
}

describe("devhost and the embedded emulators", () => {
  const hosts: TestDevHost[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) {
      await host.stop();
      fs.rmSync(host.dataDir, { recursive: true, force: true });
    }
  });

  it("starts the Service Bus emulator the settings point at, runs the trigger against it, and stops it", async () => {
    const port = await freePort();
    const connection = emulatorConnection(port);
    const host = await startTestDevHost("servicebus-app", {
      settings: { ServiceBusConnection: connection, ...queues, ...SERVICE_BUS_CONFIG },
      emulators: true,
      startEmulators,
    });
    hosts.push(host);
    expect(host.lines()).toContain(`Service Bus: starting the embedded emulator on 127.0.0.1:${port}.`);
    expect(host.lines()).toContain(
      `Service Bus: config ${path.join(APPS_DIR, "servicebus-app", "servicebus-emulator.config.json")} (DEVHOST_SERVICEBUS_CONFIG).`,
    );

    await expectRoundTrip(connection, "via-emulator");

    await host.stop();
    expect(await isListening(port)).toBe(false);
  });

  it("serves the queues of the app's own servicebus-emulator.config.json beside host.json, with no setting", async () => {
    const port = await freePort();
    const connection = emulatorConnection(port);
    const host = await startTestDevHost("servicebus-app", {
      settings: { ServiceBusConnection: connection, ...queues },
      emulators: true,
      startEmulators,
    });
    hosts.push(host);
    expect(host.lines()).toContain(
      `Service Bus: config ${path.join(APPS_DIR, "servicebus-app", "servicebus-emulator.config.json")}.`,
    );
    await expectRoundTrip(connection, "own-config");
  });

  it("starts its own emulators when none is given, and says when no setting names a config", async () => {
    const port = await freePort();
    const host = await startTestDevHost("http-app", {
      settings: { ServiceBusConnection: emulatorConnection(port) },
      emulators: true,
    });
    hosts.push(host);
    expect(host.lines()).toContain(
      "Service Bus: no DEVHOST_SERVICEBUS_CONFIG setting and no servicebus-emulator.config.json next to host.json, so the emulator serves no queues or topics.",
    );
    expect(await isListening(port)).toBe(true);
    await host.stop();
    expect(await isListening(port)).toBe(false);
  });

  it("uses an emulator that already listens instead of starting another", async () => {
    const bus = await startServiceBus({ orders: {}, alerts: {}, "status-demo": {} });
    try {
      const host = await startTestDevHost("servicebus-app", {
        settings: { ServiceBusConnection: bus.emulator.connectionString, ...queues },
        emulators: true,
        startEmulators: () => Promise.reject(new Error("must not be called")),
      });
      hosts.push(host);
      expect(host.lines()).toContain(
        `Service Bus: something already listens on 127.0.0.1:${bus.emulator.port}; using it.`,
      );
      await host.stop();
    } finally {
      await bus.stop();
    }
  });
});
