import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, SETTING_NAMES, loadConfig } from "../../src/config";

const sample = JSON.parse(readFileSync("local.settings.sample.json", "utf8")) as {
  Values: Record<string, string>;
};
const localEnv = (): Record<string, string> => ({ ...sample.Values });

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("config", () => {
  it("parses the sample settings, which point at the local emulators", () => {
    const config = loadConfig(localEnv());
    expect(config.serviceBus).toMatchObject({ kind: "connectionString" });
    expect(config.cosmos).toMatchObject({ kind: "key", endpoint: "http://127.0.0.1:8081/" });
    expect(config.serviceUrls.payment).toBe("http://127.0.0.1:7081/payment");
    expect(config.stepTimeoutSeconds).toBe(30);
  });

  it("lists every setting in local.settings.sample.json", () => {
    for (const name of SETTING_NAMES) expect(sample.Values, name).toHaveProperty(name);
  });

  it("fills defaults for timings and limits that are not set", () => {
    const env = localEnv();
    for (const name of SETTING_NAMES) delete env[name];
    const config = loadConfig(env);
    expect(config).toMatchObject({
      cosmosDatabase: "sas",
      maxInFlight: 50,
      supervisorSchedule: "*/15 * * * * *",
    });
  });

  it("accepts identity-based connections, as in Azure", () => {
    const env = localEnv();
    delete env.ServiceBusConnection;
    delete env.CosmosConnection;
    const config = loadConfig({
      ...env,
      ServiceBusConnection__fullyQualifiedNamespace: "sb-x.servicebus.windows.net",
      ServiceBusConnection__clientId: "00000000-0000-0000-0000-000000000001",
      CosmosConnection__accountEndpoint: "https://cosmos-x.documents.azure.com:443/",
    });
    expect(config.serviceBus).toEqual({
      kind: "identity",
      fullyQualifiedNamespace: "sb-x.servicebus.windows.net",
      clientId: "00000000-0000-0000-0000-000000000001",
    });
    expect(config.cosmos).toEqual({
      kind: "identity",
      endpoint: "https://cosmos-x.documents.azure.com:443/",
    });
  });

  it("names every bad setting, its value and what was expected, all at once", () => {
    const problems = problemsOf({
      ...localEnv(),
      STEP_TIMEOUT_SECONDS: "thirty",
      SUPERVISOR_SCHEDULE: "*/15 * * * *",
      PAYMENT_URL: "payment.local",
      MAX_IN_FLIGHT: "0",
    });
    expect(problems).toHaveLength(4);
    expect(problems.join("\n")).toContain('STEP_TIMEOUT_SECONDS="thirty": expected a positive whole number');
    expect(problems.join("\n")).toContain(
      'SUPERVISOR_SCHEDULE="*/15 * * * *": expected a six-field NCRONTAB',
    );
    expect(problems.join("\n")).toContain('PAYMENT_URL="payment.local": expected an absolute http(s) URL');
    expect(problems.join("\n")).toContain('MAX_IN_FLIGHT="0"');
  });

  it("requires a connection for Service Bus and Cosmos DB", () => {
    const env = localEnv();
    delete env.ServiceBusConnection;
    delete env.CosmosConnection;
    const problems = problemsOf(env);
    expect(problems.some((p) => p.startsWith("ServiceBusConnection: missing"))).toBe(true);
    expect(problems.some((p) => p.startsWith("CosmosConnection: missing"))).toBe(true);
    expect(problemsOf({ ...localEnv(), CosmosConnection: "AccountKey=abc" })[0]).toMatch(
      /^CosmosConnection: expected/,
    );
  });

  it("refuses a configuration whose retries multiply past the budget", () => {
    const problems = problemsOf({ ...localEnv(), AGENT_MAX_ATTEMPTS: "10" });
    expect(problems[0]).toMatch(
      /^RETRY_BUDGET_PER_STEP=30: retry amplification over budget: 10 agent attempts/,
    );
  });

  it("refuses an agent attempt timeout that does not fit in a step", () => {
    const problems = problemsOf({ ...localEnv(), AGENT_ATTEMPT_TIMEOUT_SECONDS: "30" });
    expect(problems[0]).toMatch(
      /^AGENT_ATTEMPT_TIMEOUT_SECONDS=30: expected less than STEP_TIMEOUT_SECONDS=30/,
    );
  });
});
