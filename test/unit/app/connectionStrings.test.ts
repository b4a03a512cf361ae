// The connections to Service Bus, Cosmos DB and Application Insights, read as the Functions host reads them.
import { describe, expect, it } from "vitest";
import {
  parseAzureMonitor,
  parseCosmos,
  parseServiceBus,
  type Env,
} from "../../../src/app/connectionStrings";

/** Each parser's result and the problems it reported. */
function parsed<T>(parse: (env: Env, problems: string[]) => T, env: Env): { value: T; problems: string[] } {
  const problems: string[] = [];
  return { value: parse(env, problems), problems };
}

const INSTRUMENTATION_KEY = "InstrumentationKey=00000000-0000-0000-0000-000000000000";
const CLIENT_ID = "00000000-0000-0000-0000-000000000001";

describe("connection strings", () => {
  it("accepts identity-based connections, as in Azure", () => {
    const env = {
      ServiceBusConnection__fullyQualifiedNamespace: "sb-x.servicebus.windows.net",
      ServiceBusConnection__clientId: CLIENT_ID,
      CosmosConnection__accountEndpoint: "https://cosmos-x.documents.azure.com:443/",
    };
    expect(parsed(parseServiceBus, env)).toEqual({
      value: {
        kind: "identity",
        fullyQualifiedNamespace: "sb-x.servicebus.windows.net",
        clientId: CLIENT_ID,
      },
      problems: [],
    });
    expect(parsed(parseCosmos, env)).toEqual({
      value: { kind: "identity", endpoint: "https://cosmos-x.documents.azure.com:443/" },
      problems: [],
    });
  });

  it("requires a connection for Service Bus and Cosmos DB", () => {
    expect(parsed(parseServiceBus, {}).problems).toEqual([
      expect.stringMatching(/^ServiceBusConnection: missing/),
    ]);
    expect(parsed(parseCosmos, {}).problems).toEqual([expect.stringMatching(/^CosmosConnection: missing/)]);
    expect(parsed(parseCosmos, { CosmosConnection: "AccountKey=abc" }).problems).toEqual([
      expect.stringMatching(/^CosmosConnection: expected/),
    ]);
  });

  it("prefers the connection string to the identity settings when both are set", () => {
    const connectionString = "Endpoint=sb://127.0.0.1;SharedAccessKeyName=name;SharedAccessKey=key";
    expect(
      parsed(parseServiceBus, {
        ServiceBusConnection: connectionString,
        ServiceBusConnection__fullyQualifiedNamespace: "sb-x.servicebus.windows.net",
      }).value,
    ).toEqual({ kind: "connectionString", connectionString });
  });

  it("reads a Cosmos DB connection string's keys in any case, keeping an = inside a value", () => {
    expect(
      parsed(parseCosmos, {
        CosmosConnection: " accountendpoint = https://x.documents.azure.com/ ; ACCOUNTKEY=k==;",
      }),
    ).toEqual({
      value: { kind: "key", endpoint: "https://x.documents.azure.com/", key: "k==" },
      problems: [],
    });
  });

  it("refuses a Service Bus connection with no endpoint or key, or a namespace that is no host name", () => {
    expect(parsed(parseServiceBus, { ServiceBusConnection: "Endpoint=sb://x" }).problems).toEqual([
      expect.stringMatching(/^ServiceBusConnection: expected a connection string/),
    ]);
    expect(
      parsed(parseServiceBus, { ServiceBusConnection__fullyQualifiedNamespace: "https://x/" }).problems,
    ).toEqual([
      expect.stringMatching(/^ServiceBusConnection__fullyQualifiedNamespace="https:\/\/x\/": expected/),
    ]);
    expect(
      parsed(parseCosmos, { CosmosConnection__accountEndpoint: "x.documents.azure.com" }).problems,
    ).toEqual([
      expect.stringMatching(
        /^CosmosConnection__accountEndpoint="x.documents.azure.com": expected an https URL/,
      ),
    ]);
  });

  it("leaves Application Insights off when its connection string is unset, and reads its authentication in any case", () => {
    expect(parsed(parseAzureMonitor, {})).toEqual({ value: null, problems: [] });
    expect(
      parsed(parseAzureMonitor, {
        APPLICATIONINSIGHTS_CONNECTION_STRING: INSTRUMENTATION_KEY,
        APPLICATIONINSIGHTS_AUTHENTICATION_STRING: `authorization=aad; clientid=${CLIENT_ID}`,
      }).value,
    ).toEqual({
      connectionString: INSTRUMENTATION_KEY,
      credential: { kind: "identity", clientId: CLIENT_ID },
    });
  });
});
