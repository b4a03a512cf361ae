/**
 * The emulator's configuration: the official emulator's Config.json format, strict ISO-8601
 * durations, errors that name the queue, property and value, and no queues without a config.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EmulatorConfigError,
  loadEmulatorConfig,
  parseIsoDuration,
  queueSettingsOf,
  ServiceBusEmulator,
  type EmulatorConfigFile,
} from "../../../src/emulators/servicebus";
import { queueConfig } from "../../support/servicebus";

let tempDir: string;

beforeAll(() => {
  tempDir = mkdtempSync(join(tmpdir(), "sb-config-"));
});
afterAll(() => {
  rmSync(tempDir, { recursive: true, force: true });
});

/** The message of the EmulatorConfigError that loading `config` throws. */
function configError(config: unknown): string {
  try {
    loadEmulatorConfig(config);
  } catch (error) {
    expect(error).toBeInstanceOf(EmulatorConfigError);
    return (error as Error).message;
  }
  throw new Error("expected the config to be refused");
}

describe("ISO-8601 durations", () => {
  it.each([
    ["PT1M", 60_000],
    ["PT0.5S", 500],
    ["P14D", 14 * 86_400_000],
    ["PT10M", 600_000],
    ["P1DT12H", 36 * 3_600_000],
    ["PT1H30M15.25S", 5_415_250],
    ["P10675199DT2H48M5.4775807S", 922_337_203_685_478], // TimeSpan.MaxValue, as ARM templates write it
  ])("reads %s as %d ms", (text, ms) => {
    expect(parseIsoDuration(text)).toBe(ms);
  });

  it.each(["", "P", "PT", "P1DT", "1M", "PT1X", "pt1m", "PT-1S", "PT1.5M", "P1D2H", " PT1M", "PT1S "])(
    "refuses %j",
    (text) => {
      expect(() => parseIsoDuration(text)).toThrow(/not an ISO-8601 duration/);
    },
  );

  it.each(["P1Y", "P2M", "P1W", "P1MT1H"])("refuses %j, whose units have no fixed length", (text) => {
    expect(() => parseIsoDuration(text)).toThrow(/years, months or weeks/);
  });
});

describe("loadEmulatorConfig", () => {
  it("reads the official format from a path, JSON text or an object, applying Service Bus defaults", () => {
    const config = queueConfig({ a: { LockDuration: "PT2S", MaxDeliveryCount: 3 }, b: {} });
    const path = join(tempDir, "Config.json");
    writeFileSync(path, JSON.stringify(config));
    for (const source of [path, JSON.stringify(config), config]) {
      expect(queueSettingsOf(loadEmulatorConfig(source))).toEqual([
        {
          name: "a",
          lockDurationMs: 2_000,
          maxDeliveryCount: 3,
          requiresDuplicateDetection: false,
          duplicateDetectionWindowMs: 600_000,
          defaultMessageTimeToLiveMs: Infinity,
          deadLetteringOnMessageExpiration: false,
        },
        {
          name: "b",
          lockDurationMs: 60_000,
          maxDeliveryCount: 10,
          requiresDuplicateDetection: false,
          duplicateDetectionWindowMs: 600_000,
          defaultMessageTimeToLiveMs: Infinity,
          deadLetteringOnMessageExpiration: false,
        },
      ]);
    }
  });

  it("names the queue, the property and the value of every problem at once", () => {
    const message = configError(
      queueConfig({
        orders: { LockDuration: "PT1X", MaxDeliveryCount: 0 },
        alerts: { DefaultMessageTimeToLive: "P1M", DuplicateDetectionHistoryTimeWindow: "P8D" },
        slow: { LockDuration: "PT6M", RequiresDuplicateDetection: "yes" as unknown as boolean },
      }),
    );
    expect(message).toContain(
      'queue "orders" property LockDuration = "PT1X": "PT1X" is not an ISO-8601 duration',
    );
    expect(message).toContain('queue "orders" property MaxDeliveryCount = 0:');
    expect(message).toContain(
      'queue "alerts" property DefaultMessageTimeToLive = "P1M": "P1M" uses years, months',
    );
    expect(message).toContain(
      'queue "alerts" property DuplicateDetectionHistoryTimeWindow = "P8D": must be at most',
    );
    expect(message).toContain('queue "slow" property LockDuration = "PT6M": must be at most 300 s');
    expect(message).toContain('queue "slow" property RequiresDuplicateDetection = "yes":');
    expect(message.split("\n")).toHaveLength(7); // a heading and six problems
  });

  it("refuses what the emulator cannot honour, and typos, instead of ignoring them", () => {
    const message = configError(
      queueConfig({
        sessions: { RequiresSession: true } as never,
        forward: { ForwardTo: "elsewhere" } as never,
        typo: { LockDurration: "PT1M" } as never,
        "bad name!": {},
        zero: { LockDuration: "PT0S" },
      }),
    );
    expect(message).toContain('queue "sessions" property RequiresSession = true: sessions are not supported');
    expect(message).toContain(
      'queue "forward" property ForwardTo = "elsewhere": auto-forwarding is not supported',
    );
    expect(message).toMatch(/queue "typo": unknown property "LockDurration" \(known: .*LockDuration/);
    expect(message).toContain('queue "bad name!" property Name = "bad name!": must be 1-260 letters');
    expect(message).toContain('queue "zero" property LockDuration = "PT0S": must be longer than zero');
  });

  it("refuses duplicate queue names, case-insensitively", () => {
    const config = queueConfig({ orders: {} });
    config.UserConfig.Namespaces[0]!.Queues!.push({ Name: "Orders", Properties: {} });
    expect(configError(config)).toContain('queue "Orders" property Name = "Orders": is declared twice');
  });

  it("reports files that are missing or not JSON, naming them", () => {
    const missing = join(tempDir, "nope.json");
    expect(configError(missing)).toContain(`Cannot read the Service Bus emulator config ${missing}`);
    const broken = join(tempDir, "broken.json");
    writeFileSync(broken, "{ not json");
    expect(configError(broken)).toContain(`config ${broken} is not valid JSON`);
    expect(configError({ UserConfig: { Namespaces: [] } })).toContain("UserConfig.Namespaces = []:");
  });

  it("fails the emulator's construction on a bad config, before anything listens", () => {
    expect(
      () => new ServiceBusEmulator({ port: 0, config: queueConfig({ q: { MaxDeliveryCount: -1 } }) }),
    ).toThrow(/queue "q" property MaxDeliveryCount = -1/);
  });

  it("serves the topics of a file written for the official emulator, with their subscriptions", () => {
    const lines: string[] = [];
    const config = queueConfig({ q: {} });
    config.UserConfig.Namespaces[0]!.Topics = [
      { Name: "topic.1", Properties: {}, Subscriptions: [{ Name: "subscription.1" }] },
    ];
    const withTopics = new ServiceBusEmulator({ port: 0, config, log: (line) => lines.push(line) });
    expect(withTopics.queueNames()).toEqual(["q"]);
    expect(withTopics.topicNames()).toEqual(["topic.1"]);
    expect(withTopics.subscriptionPaths("topic.1")).toEqual(["topic.1/Subscriptions/subscription.1"]);
  });

  it("loads the official emulator's own sample Config.json, rules and all", () => {
    // The sample shipped with github.com/Azure/azure-service-bus-emulator-installer (ServiceBus-Emulator/Config),
    // its commented-out lines left out: correlation filters on a system and a user property, a subscription
    // without rules, and a SQL filter with an action.
    const subscription = (Name: string, Rules?: unknown[]) => ({
      Name,
      Properties: {
        DeadLetteringOnMessageExpiration: false,
        DefaultMessageTimeToLive: "PT1H",
        LockDuration: "PT1M",
        MaxDeliveryCount: 3,
        ForwardDeadLetteredMessagesTo: "",
        ForwardTo: "",
        RequiresSession: false,
      },
      ...(Rules ? { Rules } : {}),
    });
    const file = {
      UserConfig: {
        Namespaces: [
          {
            Name: "sbemulatorns",
            Queues: [],
            Topics: [
              {
                Name: "topic.1",
                Properties: {
                  DefaultMessageTimeToLive: "PT1H",
                  DuplicateDetectionHistoryTimeWindow: "PT20S",
                  RequiresDuplicateDetection: false,
                },
                Subscriptions: [
                  subscription("subscription.1", [
                    {
                      Name: "app-prop-filter-1",
                      Properties: {
                        FilterType: "Correlation",
                        CorrelationFilter: { ContentType: "application/json" },
                      },
                    },
                  ]),
                  subscription("subscription.2", [
                    {
                      Name: "user-prop-filter-1",
                      Properties: {
                        FilterType: "Correlation",
                        CorrelationFilter: { Properties: { prop1: "value1" } },
                      },
                    },
                  ]),
                  subscription("subscription.3"),
                  subscription("subscription.4", [
                    {
                      Name: "sql-filter-1",
                      Properties: {
                        FilterType: "Sql",
                        SqlFilter: { SqlExpression: "sys.MessageId = '123456' AND userProp1 = 'value1'" },
                        Action: { SqlExpression: "SET sys.To = 'Entity'" },
                      },
                    },
                  ]),
                ],
              },
            ],
          },
        ],
        Logging: { Type: "File" },
      },
    };
    const emulator = new ServiceBusEmulator({ port: 0, config: file as EmulatorConfigFile });
    expect(emulator.subscriptionPaths("topic.1")).toHaveLength(4);
  });

  it("names the topic, subscription and rule of a bad filter, with the problem", () => {
    const config = queueConfig({});
    config.UserConfig.Namespaces[0]!.Topics = [
      {
        Name: "orders",
        Subscriptions: [
          {
            Name: "big",
            Rules: [
              {
                Name: "large",
                Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "quantity >" } },
              },
              {
                Name: "tagged",
                Properties: {
                  FilterType: "Sql",
                  SqlFilter: { SqlExpression: "1=1" },
                  Action: { SqlExpression: "SET" },
                },
              },
              { Name: "nofilter", Properties: { FilterType: "Correlation" } },
              {
                Name: "large",
                Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "sys.Nope = 1" } },
              },
            ],
          },
          { Name: "BIG" },
        ],
      },
    ];
    let message = "";
    try {
      loadEmulatorConfig(config);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /topic "orders" subscription "big" rule "large": expected .* but found the end of the expression/,
    );
    expect(message).toMatch(/topic "orders" subscription "big" rule "tagged": expected a property name/);
    expect(message).toMatch(/rule "nofilter": FilterType "Correlation" needs a CorrelationFilter/);
    expect(message).toMatch(/rule "large": unknown system property sys.Nope/);
    expect(message).toMatch(/rule "large" property Name = "large": is declared twice/);
    expect(message).toMatch(/topic "orders" subscription "BIG" property Name = "BIG": is declared twice/);
  });
});

describe("without a config", () => {
  it("serves no queues, and says so when it starts", async () => {
    const logged: string[] = [];
    const emulator = new ServiceBusEmulator({ port: 0, log: (line) => logged.push(line) });
    expect(emulator.queueNames()).toEqual([]);
    await emulator.start();
    try {
      expect(logged[0]).toMatch(
        /^listening on 127\.0\.0\.1:\d+ \(no queues or topics: pass a Config\.json to serve some\)$/,
      );
    } finally {
      await emulator.stop();
    }
  });
});
