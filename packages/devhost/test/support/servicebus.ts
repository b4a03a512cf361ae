/**
 * Test fixtures for the Service Bus emulator: a Config.json built from a few queue declarations, an
 * emulator on an ephemeral port, and a real ServiceBusClient connected to it.
 */
import { ServiceBusClient } from "@azure/service-bus";
import {
  ServiceBusEmulator,
  type EmulatorConfigFile,
  type QueueProperties,
  type ServiceBusEmulatorOptions,
} from "../../src/emulators/servicebus";

/** A Config.json in the official emulator's format declaring exactly these queues. */
export function queueConfig(queues: Record<string, QueueProperties>): EmulatorConfigFile {
  return {
    UserConfig: {
      Namespaces: [
        {
          Name: "sbemulatorns",
          Queues: Object.entries(queues).map(([Name, Properties]) => ({ Name, Properties })),
          Topics: [],
        },
      ],
      Logging: { Type: "File" },
    },
  };
}

/** A topic declaration in the official Config.json format: `Subscriptions[]` with optional `Rules[]`. */
export type TopicDeclaration = NonNullable<
  EmulatorConfigFile["UserConfig"]["Namespaces"][number]["Topics"]
>[number];

export interface ServiceBusFixture {
  emulator: ServiceBusEmulator;
  client: ServiceBusClient;
  /** Closes the client, then the emulator. */
  stop(): Promise<void>;
}

/** Starts an emulator on port 0 with these queues, and a client on its connection string. */
export async function startServiceBus(
  queues: Record<string, QueueProperties>,
  options: Omit<ServiceBusEmulatorOptions, "config" | "port"> & { topics?: TopicDeclaration[] } = {},
): Promise<ServiceBusFixture> {
  const { topics, ...emulatorOptions } = options;
  const config = queueConfig(queues);
  if (topics) config.UserConfig.Namespaces[0]!.Topics = topics;
  const emulator = new ServiceBusEmulator({ ...emulatorOptions, port: 0, config });
  await emulator.start();
  const client = new ServiceBusClient(emulator.connectionString);
  return {
    emulator,
    client,
    stop: async () => {
      await client.close();
      await emulator.stop();
    },
  };
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 5_000, intervalMs = 20, what = "condition" } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * How the Functions host's Newtonsoft.Json writes a DateTime of Kind Unspecified (the Service Bus extension's
 * `EnqueuedTimeUtc`, `ExpiresAtUtc`) and a DateTimeOffset at UTC (`EnqueuedTime`, `ExpiresAt`) in trigger metadata.
 */
export const DOTNET_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?$/;
export const DOTNET_DATE_TIME_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?\+00:00$/;
