import { CosmosClient, type Container } from "@azure/cosmos";
import type { AppConfig, CosmosConnectionConfig } from "../config";
import { credentialFor } from "./credential";

export { credentialFor };

/** The containers (docs/contract.md#data); all partitioned on /orderId. */
export const CONTAINERS = { orders: "orders", state: "state", leases: "leases" } as const;

/**
 * One client per process (the SDK pools connections and caches routing). Against a plain-http endpoint (the
 * local emulator) endpoint discovery must be off: the account metadata advertises https.
 */
export function createCosmosClient(connection: CosmosConnectionConfig): CosmosClient {
  const connectionPolicy = { enableEndpointDiscovery: !connection.endpoint.startsWith("http://") };
  if (connection.kind === "key") {
    return new CosmosClient({ endpoint: connection.endpoint, key: connection.key, connectionPolicy });
  }
  return new CosmosClient({
    endpoint: connection.endpoint,
    aadCredentials: credentialFor(connection.clientId),
    connectionPolicy,
  });
}

export interface CosmosContainers {
  client: CosmosClient;
  orders: Container;
  state: Container;
  leases: Container;
}

export function cosmosContainers(config: Pick<AppConfig, "cosmos" | "cosmosDatabase">): CosmosContainers {
  const client = createCosmosClient(config.cosmos);
  const database = client.database(config.cosmosDatabase);
  return {
    client,
    orders: database.container(CONTAINERS.orders),
    state: database.container(CONTAINERS.state),
    leases: database.container(CONTAINERS.leases),
  };
}

/** Status code of an @azure/cosmos error (409 conflict, 412 precondition failed, 404, 429...). */
export function cosmosStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}
