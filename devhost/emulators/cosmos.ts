// Embedded Cosmos DB stand-in: @vercel/cosmosdb-server in this process, over plain http with keep-alive,
// with the project's database and containers created through the real @azure/cosmos client, so the app
// and the tests talk to it exactly as they would to the official emulator. Where it differs from real
// Cosmos DB, and what the project does about it: docs/cosmos-emulator.md.
import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server } from "node:http";
import { CosmosClient, type CompositePath, type IndexingPolicy } from "@azure/cosmos";
import { createHttpServer } from "@vercel/cosmosdb-server";

/** The containers of DESIGN §3; every one is partitioned on /orderId (leases keep the lease name there). */
export const PROJECT_CONTAINERS = ["orders", "state", "leases"] as const;
export type ProjectContainer = (typeof PROJECT_CONTAINERS)[number];

export const PARTITION_KEY_PATH = "/orderId";

/** The official emulator's published key. The stand-in checks no auth; using this key keeps the connection
 *  string interchangeable with the official emulator's. */
export const EMULATOR_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

export const DEFAULT_COSMOS_PORT = 8081;
export const DEFAULT_COSMOS_DATABASE = "sas";

export interface CosmosEmulatorOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Default 8081; 0 picks an ephemeral port (tests). */
  port?: number;
  /** Database to create; default "sas" (COSMOS_DATABASE). */
  database?: string;
  /** Called for every HTTP request the stand-in receives (benchmarks count store requests per order). */
  onRequest?: (request: IncomingMessage) => void;
}

export interface CosmosEmulator {
  /** http://<host>:<port>, no trailing slash. */
  endpoint: string;
  port: number;
  key: string;
  /** AccountEndpoint=http://<host>:<port>/;AccountKey=<EMULATOR_KEY>; (the CosmosConnection setting). */
  connectionString: string;
  database: string;
  stop(): Promise<void>;
}

// Queries the project runs: claims of due work by state and time (starter, supervisor) and the operator
// listing, newest first by (updatedAt, id). ORDER BY on two fields needs a matching composite index, here
// and in Azure alike (infra/modules/cosmos.bicep declares the same list); the stand-in matches an index only
// in the exact direction it was declared.
const compositeOnProcessState = (field: string): CompositePath[] => [
  { path: "/processState", order: "ascending" },
  { path: `/${field}`, order: "ascending" },
];

export const PROJECT_INDEXING_POLICY: IndexingPolicy = {
  indexingMode: "consistent",
  automatic: true,
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }],
  compositeIndexes: [
    compositeOnProcessState("createdAt"),
    compositeOnProcessState("completeBy"),
    // The operator listing: newest first, ties by id; across all states and within one.
    [
      { path: "/updatedAt", order: "descending" },
      { path: "/id", order: "descending" },
    ],
    [
      { path: "/processState", order: "ascending" },
      { path: "/updatedAt", order: "descending" },
      { path: "/id", order: "descending" },
    ],
  ],
};

/**
 * The CosmosClient options an http loopback endpoint needs. Endpoint discovery must be off because the
 * stand-in's account metadata advertises https://; no custom agent, because @azure/cosmos 4.9.3 only allows
 * plain http when it builds the agent itself. Exported for devhost and tests; src/ repeats it in its adapter.
 */
export function emulatorClient(endpoint: string, key: string = EMULATOR_KEY): CosmosClient {
  return new CosmosClient({ endpoint, key, connectionPolicy: { enableEndpointDiscovery: false } });
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void =>
      reject(new Error(`Cosmos emulator cannot listen on ${host}:${port}: ${err.message}`));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    // Keep-alive sockets held by clients would keep close() waiting; nothing is in flight once we stop.
    server.closeAllConnections();
  });
}

export async function startCosmosEmulator(opts: CosmosEmulatorOptions = {}): Promise<CosmosEmulator> {
  const host = opts.host ?? "127.0.0.1";
  const database = opts.database ?? DEFAULT_COSMOS_DATABASE;
  const server = createHttpServer({ keepAlive: true });
  const onRequest = opts.onRequest;
  if (onRequest) server.on("request", (request: IncomingMessage) => onRequest(request));
  const address = await listen(server, opts.port ?? DEFAULT_COSMOS_PORT, host);
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const endpoint = `http://${urlHost}:${address.port}`;

  const client = emulatorClient(endpoint);
  try {
    const { database: db } = await client.databases.createIfNotExists({ id: database });
    for (const id of PROJECT_CONTAINERS) {
      await db.containers.createIfNotExists({
        id,
        partitionKey: { paths: [PARTITION_KEY_PATH] },
        indexingPolicy: PROJECT_INDEXING_POLICY,
      });
    }
  } catch (err) {
    client.dispose();
    await close(server);
    throw err;
  }
  client.dispose();

  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    port: address.port,
    key: EMULATOR_KEY,
    connectionString: `AccountEndpoint=${endpoint}/;AccountKey=${EMULATOR_KEY};`,
    database,
    stop: () => (stopped ??= close(server)),
  };
}
