import { CosmosClient, type Container } from "@azure/cosmos";
import type { AppConfig } from "../config";
import type { CosmosConnectionConfig } from "../app/connectionStrings";
import { credentialFor } from "../app/credential";
import { STORE_CALLS } from "../resilience/infraResilience";
import { ResilientStoreHttpClient } from "./storeHttpClient";
import { SET_ASIDE_CONTAINER } from "./setAsideBodies";

export { credentialFor };
export { cosmosStatus } from "./cosmosErrors";

/** The containers (docs/contract.md#data); all partitioned on /orderId. */
export const CONTAINERS = {
  orders: "orders",
  state: "state",
  leases: "leases",
  rejected: SET_ASIDE_CONTAINER,
} as const;

/**
 * One client per process (the SDK pools connections and caches routing). Against a plain-http endpoint (the
 * local emulator) endpoint discovery must be off: the account metadata advertises https. Every request goes
 * through the resilient HTTP client (timeouts of seconds, transient faults retried: storeHttpClient.ts).
 */
export function createCosmosClient(
  connection: CosmosConnectionConfig,
  /** Told of each request still failing past its retries (resilience/infraFaultLog.ts). */
  onFault?: (fault: unknown) => void,
): CosmosClient {
  const common = {
    endpoint: connection.endpoint,
    connectionPolicy: {
      enableEndpointDiscovery: !connection.endpoint.startsWith("http://"),
      requestTimeout: STORE_CALLS.sdkRequestTimeoutMs,
    },
    httpClient: new ResilientStoreHttpClient(onFault),
  };
  if (connection.kind === "key") return new CosmosClient({ ...common, key: connection.key });
  return new CosmosClient({ ...common, aadCredentials: credentialFor(connection.clientId) });
}

export interface CosmosContainers {
  client: CosmosClient;
  orders: Container;
  state: Container;
  leases: Container;
  rejected: Container;
}

export function cosmosContainers(
  config: Pick<AppConfig, "cosmos" | "cosmosDatabase">,
  onFault?: (fault: unknown) => void,
): CosmosContainers {
  const client = createCosmosClient(config.cosmos, onFault);
  const database = client.database(config.cosmosDatabase);
  return {
    client,
    orders: database.container(CONTAINERS.orders),
    state: database.container(CONTAINERS.state),
    leases: database.container(CONTAINERS.leases),
    rejected: database.container(CONTAINERS.rejected),
  };
}
