/**
 * The connections to Service Bus, Cosmos DB and Application Insights, as the Functions host reads them: either a
 * connection string with a key, or the `__`-suffixed settings of an identity-based connection (what Azure uses).
 * Checked at start-up with the other settings (src/config.ts), so a mistyped string names itself there rather than
 * failing on the first message or write.
 */

export type Env = Record<string, string | undefined>;

export type ServiceBusConnectionConfig =
  | { kind: "connectionString"; connectionString: string }
  | { kind: "identity"; fullyQualifiedNamespace: string; clientId?: string };

export type CosmosConnectionConfig =
  { kind: "key"; endpoint: string; key: string } | { kind: "identity"; endpoint: string; clientId?: string };

/** APPLICATIONINSIGHTS_CONNECTION_STRING, and the identity that signs in to ingestion. */
export interface AzureMonitorConnection {
  connectionString: string;
  /** From APPLICATIONINSIGHTS_AUTHENTICATION_STRING: Entra ID sign-in, with a user-assigned identity's client id. */
  credential: { kind: "identity"; clientId?: string } | { kind: "none" };
}

/** `Key=value;Key=value`, keys lower-cased: the hosts read these keys case-insensitively. */
function keyValues(connectionString: string): Map<string, string> {
  return new Map(
    connectionString
      .split(";")
      .filter((p) => p.includes("="))
      .map((p) => {
        const i = p.indexOf("=");
        return [p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim()] as const;
      }),
  );
}

export function parseServiceBus(env: Env, problems: string[]): ServiceBusConnectionConfig | undefined {
  const connectionString = env.ServiceBusConnection?.trim();
  const namespace = env.ServiceBusConnection__fullyQualifiedNamespace?.trim();
  if (connectionString) {
    if (
      !/Endpoint=sb:\/\/[^;]+/i.test(connectionString) ||
      !/SharedAccessKey(Name)?=|SharedAccessSignature=/i.test(connectionString)
    ) {
      problems.push(
        "ServiceBusConnection: expected a connection string like Endpoint=sb://<host>;SharedAccessKeyName=<name>;SharedAccessKey=<key>",
      );
      return undefined;
    }
    return { kind: "connectionString", connectionString };
  }
  if (namespace) {
    if (!/^[A-Za-z0-9.-]+$/.test(namespace)) {
      problems.push(
        `ServiceBusConnection__fullyQualifiedNamespace="${namespace}": expected a host name such as mybus.servicebus.windows.net`,
      );
      return undefined;
    }
    const clientId = env.ServiceBusConnection__clientId?.trim();
    return { kind: "identity", fullyQualifiedNamespace: namespace, ...(clientId ? { clientId } : {}) };
  }
  problems.push(
    "ServiceBusConnection: missing; set ServiceBusConnection (connection string) or ServiceBusConnection__fullyQualifiedNamespace (managed identity)",
  );
  return undefined;
}

export function parseCosmos(env: Env, problems: string[]): CosmosConnectionConfig | undefined {
  const connectionString = env.CosmosConnection?.trim();
  const endpoint = env.CosmosConnection__accountEndpoint?.trim();
  if (connectionString) {
    const parts = keyValues(connectionString);
    const accountEndpoint = parts.get("accountendpoint");
    const key = parts.get("accountkey");
    if (!accountEndpoint || !/^https?:\/\//.test(accountEndpoint) || !key) {
      problems.push(
        "CosmosConnection: expected a connection string like AccountEndpoint=https://<account>.documents.azure.com:443/;AccountKey=<key>;",
      );
      return undefined;
    }
    return { kind: "key", endpoint: accountEndpoint, key };
  }
  if (endpoint) {
    if (!/^https?:\/\/[^/]+/.test(endpoint)) {
      problems.push(
        `CosmosConnection__accountEndpoint="${endpoint}": expected an https URL such as https://<account>.documents.azure.com:443/`,
      );
      return undefined;
    }
    const clientId = env.CosmosConnection__clientId?.trim();
    return { kind: "identity", endpoint, ...(clientId ? { clientId } : {}) };
  }
  problems.push(
    "CosmosConnection: missing; set CosmosConnection (connection string) or CosmosConnection__accountEndpoint (managed identity)",
  );
  return undefined;
}

/**
 * Application Insights, or null when it is not configured: the connection string, and the authentication string
 * that makes ingestion use Entra ID (`Authorization=AAD`, `ClientId=<client id>` for a user-assigned identity),
 * which the deployed component requires (its local authentication is off).
 */
export function parseAzureMonitor(env: Env, problems: string[]): AzureMonitorConnection | null {
  const connectionString = env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim();
  if (!connectionString) return null;
  if (!/(^|;)\s*(InstrumentationKey|IngestionEndpoint)=/i.test(connectionString)) {
    problems.push(
      "APPLICATIONINSIGHTS_CONNECTION_STRING: expected a connection string like InstrumentationKey=<guid>;IngestionEndpoint=https://...",
    );
    return null;
  }
  const authentication = env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING?.trim();
  if (!authentication) return { connectionString, credential: { kind: "none" } };
  const parts = keyValues(authentication);
  const clientId = parts.get("clientid");
  if (
    parts.get("authorization")?.toUpperCase() !== "AAD" ||
    (clientId !== undefined && !/^[0-9a-f-]{36}$/i.test(clientId))
  ) {
    problems.push(
      "APPLICATIONINSIGHTS_AUTHENTICATION_STRING: expected Authorization=AAD, with ClientId=<client id> for a user-assigned identity",
    );
    return null;
  }
  return { connectionString, credential: { kind: "identity", ...(clientId ? { clientId } : {}) } };
}
