import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { planEmulators, settingsForEmulators } from "../../src/emulatorPlan";
import {
  applySettingsToEnv,
  findAppRoot,
  parseTimeSpan,
  readHostConfig,
  readLocalSettings,
  resolveAppSettingExpressions,
  resolveConnectionString,
} from "../../src/settings";

const dirs: string[] = [];
function tempDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-settings-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("devhost settings", () => {
  it("puts file values under existing variables and explicit ones on top, and restores them", () => {
    const env: NodeJS.ProcessEnv = { KEEP: "from-env", OVERRIDE: "from-env" };
    const restore = applySettingsToEnv(
      { KEEP: "file", OVERRIDE: "file", NEW: "file" },
      { OVERRIDE: "explicit" },
      env,
    );
    expect(env).toEqual({ KEEP: "from-env", OVERRIDE: "explicit", NEW: "file" });
    restore();
    expect(env).toEqual({ KEEP: "from-env", OVERRIDE: "from-env" });
  });

  it("reads local.settings.json and names what is wrong with it", () => {
    const dir = tempDir({
      "ok.json": JSON.stringify({ IsEncrypted: false, Values: { A: "1" } }),
      "bad.json": JSON.stringify({ Values: { A: 1 } }),
    });
    expect(readLocalSettings(path.join(dir, "ok.json")).values).toEqual({ A: "1" });
    expect(() => readLocalSettings(path.join(dir, "bad.json"))).toThrow(
      /Values\.A: every value must be a string/,
    );
  });

  it("resolves %NAME% expressions and refuses unknown names", () => {
    const env = { STARTER_SCHEDULE: "0 */1 * * * *" };
    expect(resolveAppSettingExpressions("%STARTER_SCHEDULE%", "starter schedule", env)).toBe("0 */1 * * * *");
    expect(() => resolveAppSettingExpressions("%MISSING%", "starter schedule", env)).toThrow(
      /starter schedule: '%MISSING%' does not resolve/,
    );
  });

  it("reads the host.json options the devhost honours, with the host's defaults", () => {
    const dir = tempDir({
      "host.json": JSON.stringify({
        version: "2.0",
        extensions: {
          serviceBus: {
            maxConcurrentCalls: 4,
            maxMessageBatchSize: 50,
            maxAutoLockRenewalDuration: "00:02:00",
            clientRetryOptions: {
              mode: "fixed",
              maxRetries: 2,
              delay: "00:00:00.50",
              tryTimeout: "00:00:10",
            },
          },
          durableTask: { hubName: "%HUB%" },
          http: { routePrefix: "/v1/" },
        },
      }),
      "dist/src/index.js": "",
    });
    expect(findAppRoot(path.join(dir, "dist/src/index.js"))).toBe(dir);
    expect(readHostConfig(dir, { HUB: "MyHub" })).toEqual({
      serviceBus: {
        maxConcurrentCalls: 4,
        maxMessageBatchSize: 50,
        autoCompleteMessages: true,
        maxAutoLockRenewalMs: 120_000,
        // maxDelay not given: the host's default.
        clientRetry: { mode: "fixed", maxRetries: 2, delayMs: 500, maxDelayMs: 60_000, tryTimeoutMs: 10_000 },
      },
      durableTask: { hubName: "MyHub" },
      http: { routePrefix: "v1" },
    });
    expect(readHostConfig(tempDir({})).serviceBus.maxConcurrentCalls).toBe(16);
    expect(readHostConfig(tempDir({})).serviceBus.maxMessageBatchSize).toBe(1000);
    expect(readHostConfig(tempDir({})).serviceBus.clientRetry).toEqual({
      mode: "exponential",
      maxRetries: 3,
      delayMs: 800,
      maxDelayMs: 60_000,
      tryTimeoutMs: 60_000,
    });
    expect(parseTimeSpan("1.02:03:04", "x")).toBe(((24 + 2) * 3600 + 3 * 60 + 4) * 1000);
  });

  it("requires a connection string locally and explains identity-based connections", () => {
    const cs = "Endpoint=sb://127.0.0.1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true";
    expect(
      resolveConnectionString("ServiceBusConnection", "ServiceBus", "f", { ServiceBusConnection: cs }),
    ).toBe(cs);
    expect(resolveConnectionString("Bus", "ServiceBus", "f", { AzureWebJobsBus: cs })).toBe(cs);
    expect(() =>
      resolveConnectionString("ServiceBusConnection", "ServiceBus", "submitOrder", {
        ServiceBusConnection__fullyQualifiedNamespace: "ns.servicebus.windows.net",
      }),
    ).toThrow(/identity-based .* work in Azure only/);
    expect(() => resolveConnectionString("ServiceBusConnection", "ServiceBus", "f", {})).toThrow(
      /app setting "ServiceBusConnection" .* is not set/,
    );
  });

  it("points settings at the given emulators, by value, and leaves every other value alone", () => {
    const env = {
      ServiceBusConnection:
        "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
      CosmosConnection: "AccountEndpoint=http://127.0.0.1:8081/;AccountKey=abc;",
      INVENTORY_URL: "http://127.0.0.1:7081/inventory",
      REMOTE_URL: "https://example.com/x",
    };
    expect(
      settingsForEmulators(
        {
          serviceBusConnectionString: "Endpoint=sb://127.0.0.1:40001;UseDevelopmentEmulator=true",
          cosmosConnectionString: "AccountEndpoint=http://127.0.0.1:40002/;AccountKey=abc;",
        },
        env,
      ),
    ).toEqual({
      ServiceBusConnection: "Endpoint=sb://127.0.0.1:40001;UseDevelopmentEmulator=true",
      CosmosConnection: "AccountEndpoint=http://127.0.0.1:40002/;AccountKey=abc;",
    });
  });

  it("plans the emulators the settings point at, with the config files the settings name", async () => {
    const dir = tempDir({});
    const plan = await planEmulators(
      {
        ServiceBusConnection: "Endpoint=sb://127.0.0.1:1;UseDevelopmentEmulator=true",
        CosmosConnection: "AccountEndpoint=http://127.0.0.1:2/;AccountKey=abc;",
        DEVHOST_SERVICEBUS_CONFIG: "infra/queues.json",
      },
      dir,
    );
    expect(plan.request).toEqual({
      serviceBus: true,
      cosmos: true,
      ports: { serviceBus: 1, cosmos: 2 },
      serviceBusConfig: path.join(dir, "infra/queues.json"),
      cosmosConfig: undefined,
    });
    expect(plan.notes).toContain(
      "Cosmos DB: no DEVHOST_COSMOS_CONFIG setting and no cosmos-emulator.config.json next to host.json, so the emulator creates no database.",
    );
  });
});
