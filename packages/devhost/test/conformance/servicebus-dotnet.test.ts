/**
 * The Service Bus emulator against Azure.Messaging.ServiceBus, the .NET client of the Azure Functions
 * host's Service Bus extension: starts the emulator with queues of its own, runs the xunit project in
 * servicebus-dotnet/ with `dotnet test`, and requires every .NET test to pass. Skipped, saying so, where
 * the .NET SDK is not installed (npm test must pass with Node.js alone).
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QueueProperties } from "../../src/emulators/servicebus";
import { ServiceBusEmulator } from "../../src/emulators/servicebus";
import { queueConfig, type TopicDeclaration } from "../support/servicebus";
import { dotnetSdkVersion, runDotnetTest } from "./dotnetRunner";

/**
 * One queue per role, so that the .NET test classes can run in parallel; short locks keep renewal and
 * lock-loss tests quick. The .NET side reads each name from SERVICEBUS_QUEUE_<ROLE>.
 */
const QUEUES: Record<string, QueueProperties> = {
  processor: { LockDuration: "PT10S" },
  "processor-errors": { LockDuration: "PT10S", MaxDeliveryCount: 5 },
  "processor-poison": { LockDuration: "PT10S", MaxDeliveryCount: 3 },
  renewal: { LockDuration: "PT2S" },
  "send-receive": { LockDuration: "PT30S" },
  batches: {},
  large: {},
  "receive-and-delete": {},
  prefetch: { LockDuration: "PT30S" },
  abandon: {},
  "dead-letter": {},
  "max-delivery": { MaxDeliveryCount: 2 },
  deferral: {},
  locks: { LockDuration: "PT4S" },
  "lock-lost": { LockDuration: "PT1S" },
  scheduling: {},
  "scheduled-send": {},
  expiry: { DeadLetteringOnMessageExpiration: true },
  duplicates: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
  "duplicates-one-by-one": { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
  "duplicates-list": { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
  "duplicates-batch": { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
  peek: {},
  properties: {},
  "modified-properties": {},
  refusals: {},
};

/** TopicTests' topic: one subscription without rules, one with a SQL filter and action, one with a correlation filter. */
const TOPIC = "conformance-topic";
const TOPICS: TopicDeclaration[] = [
  {
    Name: TOPIC,
    Subscriptions: [
      { Name: "all" },
      {
        Name: "blue",
        Rules: [
          {
            Name: "paint",
            Properties: {
              FilterType: "Sql",
              SqlFilter: { SqlExpression: "color = 'blue'" },
              Action: { SqlExpression: "SET sys.Label = 'blue-order'" },
            },
          },
        ],
      },
      {
        Name: "orders",
        Rules: [
          { Name: "order", Properties: { FilterType: "Correlation", CorrelationFilter: { Label: "order" } } },
        ],
      },
    ],
  },
];

const PROJECT_DIR = join(import.meta.dirname, "servicebus-dotnet");
/** Restore and build take most of it on a cold machine; the tests themselves run in about 15 s. */
const DOTNET_TIMEOUT_MS = 240_000;

const sdk = dotnetSdkVersion();

describe("Azure.Messaging.ServiceBus 7.21.0 against the emulator", () => {
  let emulator: ServiceBusEmulator;
  const log: string[] = [];

  beforeAll(async () => {
    if (!sdk) return;
    const config = queueConfig(QUEUES);
    config.UserConfig.Namespaces[0]!.Topics = TOPICS;
    emulator = new ServiceBusEmulator({
      port: 0,
      config,
      log: (line) => log.push(line),
    });
    await emulator.start();
  });
  afterAll(async () => {
    await emulator?.stop();
  });

  it.skipIf(!sdk)(
    `passes every test of servicebus-dotnet/ (${sdk ? `.NET SDK ${sdk}` : "skipped: `dotnet` is not on PATH; install the .NET 10 SDK to run it"})`,
    async () => {
      const env: Record<string, string> = {
        SERVICEBUS_CONNECTION_STRING: emulator.connectionString,
        SERVICEBUS_TOPIC: TOPIC,
      };
      for (const role of Object.keys(QUEUES)) {
        env[`SERVICEBUS_QUEUE_${role.toUpperCase().replace(/-/g, "_")}`] = role;
      }
      const result = await runDotnetTest(PROJECT_DIR, env, DOTNET_TIMEOUT_MS);
      const report = [
        ...result.notPassed.map((test) => `${test.outcome}: ${test.name}\n  ${test.message}`),
        "--- dotnet test output ---",
        result.output,
        "--- emulator log ---",
        ...log,
      ].join("\n");
      expect(result.total, report).toBeGreaterThan(0);
      expect(result.notPassed, report).toEqual([]);
      expect(result.passed, report).toBe(result.total);
      expect(result.exitCode, report).toBe(0);
      // The one vitest test stands for many: the log says how many .NET tests it ran.
      console.info(`servicebus-dotnet: ${result.passed} of ${result.total} xunit tests passed`);
    },
    DOTNET_TIMEOUT_MS + 10_000,
  );
});

if (!sdk) {
  console.warn(
    "servicebus-dotnet.test.ts: skipped, `dotnet` is not on PATH (the .NET 10 SDK runs this suite)",
  );
}
