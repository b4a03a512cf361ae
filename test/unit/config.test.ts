import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  HOST_BODY_LIMIT_SETTING,
  LOCAL_PAGING_KEY_PREFIX,
  MIN_PAGING_KEY_LENGTH,
  SETTING_NAMES,
  hostRequestBodyLimit,
  loadConfig,
} from "../../src/config";
import { AGENT_NAMES } from "../../src/domain";
import { TEST_PAGING_KEY } from "../support/domain";

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

  it("names each setting once: the table is keyed by config field, so two entries could claim one name", () => {
    expect(SETTING_NAMES.filter((name, i) => SETTING_NAMES.indexOf(name) !== i)).toEqual([]);
  });

  it("lists every setting in local.settings.sample.json", () => {
    for (const name of SETTING_NAMES) expect(sample.Values, name).toHaveProperty(name);
  });

  it("ships the host's body limit derived from MAX_REQUEST_BYTES, so the host refuses a body declared larger", () => {
    expect(sample.Values[HOST_BODY_LIMIT_SETTING]).toBe(
      String(hostRequestBodyLimit(Number(sample.Values.MAX_REQUEST_BYTES))),
    );
  });

  it("refuses a host body limit below MAX_REQUEST_BYTES, naming both", () => {
    const problems = problemsOf({ ...localEnv(), [HOST_BODY_LIMIT_SETTING]: "1000" });
    expect(problems).toEqual([
      expect.stringMatching(/^FUNCTIONS_REQUEST_BODY_SIZE_LIMIT=1000: .*MAX_REQUEST_BYTES=65536/),
    ]);
    expect(() => loadConfig({ ...localEnv(), [HOST_BODY_LIMIT_SETTING]: "65536" })).not.toThrow();
  });

  it("fills defaults for timings and limits that are not set", () => {
    const env = localEnv();
    for (const name of SETTING_NAMES) delete env[name];
    const config = loadConfig({ ...env, PAGING_TOKEN_KEY: TEST_PAGING_KEY });
    expect(config).toMatchObject({
      cosmosDatabase: "sas",
      maxInFlight: 50,
      supervisorSchedule: "*/15 * * * * *",
    });
  });

  it("sends telemetry to Application Insights when its connection string is set, signed in as the identity", () => {
    const connectionString =
      "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/";
    expect(loadConfig(localEnv()).telemetry).toEqual({
      azureMonitor: null,
      localTracing: "memory",
      samplingRatio: 1,
    });
    const azure = loadConfig({
      ...localEnv(),
      APPLICATIONINSIGHTS_CONNECTION_STRING: connectionString,
      APPLICATIONINSIGHTS_AUTHENTICATION_STRING:
        "ClientId=00000000-0000-0000-0000-000000000001;Authorization=AAD",
      TRACE_SAMPLING_RATIO: "0.25",
    }).telemetry;
    expect(azure).toMatchObject({
      azureMonitor: {
        connectionString,
        credential: { kind: "identity", clientId: "00000000-0000-0000-0000-000000000001" },
      },
      samplingRatio: 0.25,
    });
    expect(
      loadConfig({
        ...localEnv(),
        APPLICATIONINSIGHTS_CONNECTION_STRING: connectionString,
        APPLICATIONINSIGHTS_AUTHENTICATION_STRING: "Authorization=AAD",
      }).telemetry.azureMonitor?.credential,
    ).toEqual({ kind: "identity" });
    expect(
      loadConfig({ ...localEnv(), APPLICATIONINSIGHTS_CONNECTION_STRING: connectionString }).telemetry
        .azureMonitor?.credential,
    ).toEqual({ kind: "none" });
  });

  it("refuses a bad tracing mode, sampling ratio, connection string or authentication string", () => {
    const problems = problemsOf({
      ...localEnv(),
      LOCAL_TRACING: "otlp",
      TRACE_SAMPLING_RATIO: "1.5",
      APPLICATIONINSIGHTS_CONNECTION_STRING: "https://example.invalid",
    });
    expect(problems).toEqual([
      expect.stringMatching(/^LOCAL_TRACING="otlp": expected off, memory or console/),
      expect.stringMatching(/^TRACE_SAMPLING_RATIO="1.5": expected a share of traces from 0 to 1/),
      expect.stringMatching(/^APPLICATIONINSIGHTS_CONNECTION_STRING: expected a connection string/),
    ]);
    for (const authentication of ["Authorization=Key", "Authorization=AAD;ClientId=not-a-guid"]) {
      expect(
        problemsOf({
          ...localEnv(),
          APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000",
          APPLICATIONINSIGHTS_AUTHENTICATION_STRING: authentication,
        }),
        authentication,
      ).toEqual([
        expect.stringMatching(/^APPLICATIONINSIGHTS_AUTHENTICATION_STRING: expected Authorization=AAD/),
      ]);
    }
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

  it("finds each service under REMOTE_SERVICES_URL, unless SERVICE_URLS or its own <SERVICE>_URL says otherwise", () => {
    const [first, second, ...rest] = AGENT_NAMES;
    const urls = loadConfig({
      ...localEnv(),
      REMOTE_SERVICES_URL: "https://gateway.contoso.example/services/",
      SERVICE_URLS: ` ${first}=https://${first}.contoso.example/ `,
      [`${second!.toUpperCase()}_URL`]: `https://${second}.contoso.example`,
    }).serviceUrls;
    expect(urls[first!]).toBe(`https://${first}.contoso.example`);
    expect(urls[second!]).toBe(`https://${second}.contoso.example`);
    for (const s of rest) expect(urls[s]).toBe(`https://gateway.contoso.example/services/${s}`);
  });

  it("names each bad SERVICE_URLS pair, and a service given its URL twice", () => {
    const [first, second] = AGENT_NAMES;
    const problems = problemsOf({
      ...localEnv(),
      SERVICE_URLS: `${first}=https://a.example,notaservice=https://w.example,${second}=ftp://b.example,${first}=https://c.example,oops`,
    }).join("\n");
    expect(problems).toContain(`"notaservice" is not a service of the process (${AGENT_NAMES.join(", ")})`);
    expect(problems).toContain(`${second}: expected an absolute http(s) URL, got "ftp://b.example"`);
    expect(problems).toContain(`${first} is named twice`);
    expect(problems).toContain(
      `expected service=url pairs such as ${first}=https://${first}.example, got "oops"`,
    );
    expect(
      problemsOf({
        ...localEnv(),
        SERVICE_URLS: `${first}=https://a.example`,
        [`${first!.toUpperCase()}_URL`]: "https://b.example",
      }),
    ).toEqual([`${first!.toUpperCase()}_URL and SERVICE_URLS both give ${first}'s URL: keep one of them`]);
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

  describe("chaos", () => {
    const chaosOn = { CHAOS_ENABLED: "true", CHAOS_FAULT_RATE: "0.05" };

    it("is off by default, in the sample and with no CHAOS_* setting", () => {
      expect(loadConfig(localEnv()).chaos).toBeNull();
      const env = localEnv();
      for (const name of SETTING_NAMES.filter((n) => n.startsWith("CHAOS_"))) delete env[name];
      expect(loadConfig(env).chaos).toBeNull();
    });

    it("parses what the switch lets through", () => {
      expect(
        loadConfig({
          ...localEnv(),
          CHAOS_ENABLED: "true",
          // Two of the declared services, written with a space after the comma.
          CHAOS_SERVICES: AGENT_NAMES.slice(0, 2).join(", "),
          CHAOS_LATENCY_RATE: "0.1",
          CHAOS_LATENCY_SECONDS: "40",
          CHAOS_FAULT_RATE: ".05",
        }).chaos,
      ).toEqual({ services: AGENT_NAMES.slice(0, 2), latencyRate: 0.1, latencyMs: 40_000, faultRate: 0.05 });
      expect(loadConfig({ ...localEnv(), ...chaosOn, CHAOS_SERVICES: "*" }).chaos?.services).toEqual(
        AGENT_NAMES,
      );
    });

    it("refuses a rate set without CHAOS_ENABLED=true, naming each", () => {
      const problems = problemsOf({ ...localEnv(), CHAOS_LATENCY_RATE: "0.1", CHAOS_FAULT_RATE: "1" });
      expect(problems).toEqual([
        expect.stringMatching(/^CHAOS_LATENCY_RATE=0\.1: refused without CHAOS_ENABLED=true/),
        expect.stringMatching(/^CHAOS_FAULT_RATE=1: refused without CHAOS_ENABLED=true/),
      ]);
      expect(problemsOf({ ...localEnv(), CHAOS_ENABLED: "false", CHAOS_FAULT_RATE: "0.5" })).toHaveLength(1);
    });

    it("refuses rates outside [0, 1] and other bad values, naming the setting", () => {
      const problems = problemsOf({
        ...localEnv(),
        CHAOS_ENABLED: "yes",
        CHAOS_LATENCY_RATE: "1.5",
        CHAOS_FAULT_RATE: "-0.1",
        CHAOS_LATENCY_SECONDS: "0",
        CHAOS_SERVICES: "payment,billing",
      });
      expect(problems).toEqual([
        'CHAOS_ENABLED="yes": expected true or false',
        `CHAOS_SERVICES="payment,billing": expected * or comma-separated services among ${AGENT_NAMES.join(", ")}`,
        'CHAOS_LATENCY_RATE="1.5": expected a share of attempts from 0 to 1, such as 0.05',
        'CHAOS_LATENCY_SECONDS="0": expected a number of seconds above 0 and at most 3600',
        'CHAOS_FAULT_RATE="-0.1": expected a share of attempts from 0 to 1, such as 0.05',
      ]);
    });

    it("accepts the switch with both rates at 0, injecting nothing", () => {
      expect(loadConfig({ ...localEnv(), CHAOS_ENABLED: "true" }).chaos).toBeNull();
    });

    it("refuses to start in production: AZURE_FUNCTIONS_ENVIRONMENT=Production, or unset in Azure", () => {
      expect(problemsOf({ ...localEnv(), ...chaosOn, AZURE_FUNCTIONS_ENVIRONMENT: "Production" })).toEqual([
        expect.stringMatching(
          /^CHAOS_ENABLED=true: refused in production \(AZURE_FUNCTIONS_ENVIRONMENT="Production"\)/,
        ),
      ]);
      const azure = {
        ...localEnv(),
        OPERATOR_AUTH: "platform",
        WEBSITE_SITE_NAME: "func-x",
        PAGING_TOKEN_KEY: TEST_PAGING_KEY,
      };
      expect(problemsOf({ ...azure, ...chaosOn })).toEqual([
        expect.stringMatching(
          /^CHAOS_ENABLED=true: refused in production \(AZURE_FUNCTIONS_ENVIRONMENT is unset in Azure/,
        ),
      ]);
      expect(
        loadConfig({ ...azure, ...chaosOn, AZURE_FUNCTIONS_ENVIRONMENT: "Staging" }).chaos,
      ).toMatchObject({
        faultRate: 0.05,
      });
      // Even with both rates at 0: production never runs with the switch on.
      expect(problemsOf({ ...azure, CHAOS_ENABLED: "true" })).toHaveLength(1);
      // Off, chaos asks nothing of the environment: production starts as before.
      expect(loadConfig(azure).chaos).toBeNull();
    });
  });
  describe("paging keys", () => {
    const longEnough = "k".repeat(MIN_PAGING_KEY_LENGTH);

    it("reads the key continuation tokens are signed with, and the previous one when set", () => {
      expect(loadConfig(localEnv()).pagingKeys).toEqual({
        current: sample.Values.PAGING_TOKEN_KEY,
        previous: null,
      });
      expect(
        loadConfig({
          ...localEnv(),
          PAGING_TOKEN_KEY: ` ${longEnough} `,
          PAGING_TOKEN_PREVIOUS_KEY: TEST_PAGING_KEY,
        }).pagingKeys,
      ).toEqual({ current: longEnough, previous: TEST_PAGING_KEY });
    });

    it("refuses to start without a key, saying what to put there", () => {
      const { PAGING_TOKEN_KEY: _key, ...env } = localEnv();
      for (const missing of [env, { ...env, PAGING_TOKEN_KEY: "  " }]) {
        expect(problemsOf(missing)).toEqual([
          `PAGING_TOKEN_KEY: required: the key continuation tokens are signed with, the same on every instance: ` +
            `at least ${MIN_PAGING_KEY_LENGTH} characters, such as the output of \`openssl rand -base64 48\` ` +
            "(in Azure, a Key Vault reference infra/ writes)",
        ]);
      }
    });

    it("refuses a short key or an unresolved Key Vault reference, for either setting, never quoting the value", () => {
      const short = "s3cret-but-short";
      const reference =
        "@Microsoft.KeyVault(SecretUri=https://kv-x.vault.azure.net/secrets/paging-token-key)";
      const problems = problemsOf({
        ...localEnv(),
        PAGING_TOKEN_KEY: short,
        PAGING_TOKEN_PREVIOUS_KEY: reference,
      });
      expect(problems).toEqual([
        `PAGING_TOKEN_KEY: expected at least ${MIN_PAGING_KEY_LENGTH} characters, such as the output of ` +
          `\`openssl rand -base64 48\`, got ${short.length} characters`,
        expect.stringMatching(
          /^PAGING_TOKEN_PREVIOUS_KEY: a Key Vault reference the platform did not resolve: the app's identity needs Key Vault Secrets User/,
        ),
      ]);
      expect(problems.join("\n")).not.toContain(short);
      expect(problems.join("\n")).not.toContain("kv-x");
      expect(problemsOf({ ...localEnv(), PAGING_TOKEN_KEY: longEnough.slice(1) })).toHaveLength(1);
    });

    it("ships a key for local runs only, which Azure refuses, as current or previous key", () => {
      expect(sample.Values.PAGING_TOKEN_KEY!.startsWith(LOCAL_PAGING_KEY_PREFIX)).toBe(true);
      const azure = { ...localEnv(), OPERATOR_AUTH: "platform", WEBSITE_SITE_NAME: "func-x" };
      expect(problemsOf(azure)).toEqual([
        `PAGING_TOKEN_KEY: a key for local runs (it starts with "${LOCAL_PAGING_KEY_PREFIX}") is not allowed in ` +
          "Azure (WEBSITE_SITE_NAME is set); use the Key Vault reference infra/ writes",
      ]);
      expect(
        problemsOf({
          ...azure,
          PAGING_TOKEN_KEY: TEST_PAGING_KEY,
          PAGING_TOKEN_PREVIOUS_KEY: sample.Values.PAGING_TOKEN_KEY,
        }),
      ).toEqual([expect.stringMatching(/^PAGING_TOKEN_PREVIOUS_KEY: a key for local runs/)]);
      expect(loadConfig({ ...azure, PAGING_TOKEN_KEY: TEST_PAGING_KEY }).pagingKeys.current).toBe(
        TEST_PAGING_KEY,
      );
    });
  });
});
