// Embedded Cosmos DB stand-in: @vercel/cosmosdb-server in this process on a private loopback port (its routes and
// handlers in a listener of this package, standInServer.ts, which runs document queries in linear time), behind a
// gateway (gateway.ts, cosmosProtocol.ts) that serves clients over plain http with keep-alive and corrects what
// the server answers differently from Cosmos DB for the .NET and Python SDKs. The databases and containers of
// its config (config.ts) are created through the real @azure/cosmos client, so an app talks to it exactly as it
// would to the official emulator. Where it differs from real Cosmos DB: docs/cosmos-emulator.md.
import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server } from "node:http";
import { CosmosClient } from "@azure/cosmos";
import { DEFAULT_COSMOS_PORT } from "../ports";
import { EMPTY_COSMOS_CONFIG, loadCosmosConfig, type CosmosEmulatorConfig } from "./config";
import { cosmosProtocol } from "./cosmosProtocol";
import { createGateway, type ServedResponse } from "./gateway";
import { createStandInServer } from "./standInServer";

/** The official emulator's published key. The stand-in checks no auth; using this key keeps the connection
 *  string interchangeable with the official emulator's. */
export const EMULATOR_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

export interface CosmosEmulatorOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Default 8081; 0 picks an ephemeral port (tests). */
  port?: number;
  /** What to create on start: a config file path or a parsed config (config.ts); default: nothing. */
  config?: string | CosmosEmulatorConfig;
  /** Called for every HTTP request the stand-in receives (benchmarks count store requests per order). */
  onRequest?: (request: IncomingMessage) => void;
  /** Called again once a request's response has been sent, with its status and size (benchmarks weigh them). */
  onResponse?: (request: IncomingMessage, response: ServedResponse) => void;
}

export interface CosmosEmulator {
  /** http://<host>:<port>, no trailing slash. */
  endpoint: string;
  port: number;
  key: string;
  /** AccountEndpoint=http://<host>:<port>/;AccountKey=<EMULATOR_KEY>; (the CosmosConnection setting). */
  connectionString: string;
  /** The databases it created, as its config names them. */
  databases: string[];
  stop(): Promise<void>;
}

/**
 * A client of the stand-in with the default options. It must not be given a custom agent: @azure/cosmos 4.9.3
 * allows plain http only when it builds the agent itself. Exported for callers that talk to the stand-in with
 * their own client.
 */
export function emulatorClient(endpoint: string, key: string = EMULATOR_KEY): CosmosClient {
  return new CosmosClient({ endpoint, key });
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
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    // Keep-alive sockets held by clients would keep close() waiting; nothing is in flight once we stop.
    server.closeAllConnections();
  });
}

export async function startCosmosEmulator(opts: CosmosEmulatorOptions = {}): Promise<CosmosEmulator> {
  const host = opts.host ?? "127.0.0.1";
  const config = opts.config === undefined ? EMPTY_COSMOS_CONFIG : loadCosmosConfig(opts.config);
  // The server listens on a private loopback port of its own: the gateway forwards translated requests there.
  const server = createStandInServer();
  await listen(server, 0, "127.0.0.1");
  let endpoint = "";
  const gateway = createGateway(
    server,
    cosmosProtocol(() => `${endpoint}/`),
    {
      ...(opts.onRequest ? { onRequest: opts.onRequest } : {}),
      ...(opts.onResponse ? { onResponse: opts.onResponse } : {}),
    },
  );
  const stopBoth = async (): Promise<void> => {
    gateway.dispose();
    await Promise.all([close(gateway.server), close(server)]);
  };
  let address: AddressInfo;
  try {
    address = await listen(gateway.server, opts.port ?? DEFAULT_COSMOS_PORT, host);
  } catch (err) {
    await stopBoth();
    throw err;
  }
  endpoint = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;

  try {
    await createDeclared(endpoint, config);
  } catch (err) {
    await stopBoth();
    throw err;
  }

  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    port: address.port,
    key: EMULATOR_KEY,
    connectionString: `AccountEndpoint=${endpoint}/;AccountKey=${EMULATOR_KEY};`,
    databases: config.databases.map((d) => d.id),
    stop: () => (stopped ??= stopBoth()),
  };
}

/** Creates every database and container the config declares, through the real client. */
async function createDeclared(endpoint: string, config: CosmosEmulatorConfig): Promise<void> {
  const client = emulatorClient(endpoint);
  try {
    for (const { id, containers } of config.databases) {
      const { database } = await client.databases.createIfNotExists({ id });
      for (const container of containers) await database.containers.createIfNotExists(container);
    }
  } finally {
    client.dispose();
  }
}
