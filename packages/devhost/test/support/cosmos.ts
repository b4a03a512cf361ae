// One Cosmos stand-in per test file, on an ephemeral port, so test files can run in parallel. It creates the
// database and containers of TEST_COSMOS_CONFIG: three containers partitioned on /orderId whose composite
// indexes serve the claim, sweep and listing queries of an order-processing app.
import { IndexingMode, type Container, type CosmosClient } from "@azure/cosmos";
import {
  emulatorClient,
  startCosmosEmulator,
  type CosmosEmulator,
  type CosmosEmulatorConfig,
  type CosmosIndexingPolicy,
} from "../../src/emulators/cosmos";

export const TEST_DATABASE = "testdb";
export const TEST_CONTAINERS = ["orders", "state", "leases"] as const;
export type TestContainer = (typeof TEST_CONTAINERS)[number];
export const TEST_PARTITION_KEY_PATH = "/orderId";

// ORDER BY on two fields needs a matching composite index, here and in Azure alike; the stand-in matches an
// index only in the exact direction it was declared.
const compositeOnProcessState = (field: string) => [
  { path: "/processState", order: "ascending" as const },
  { path: `/${field}`, order: "ascending" as const },
];

export const TEST_INDEXING_POLICY: CosmosIndexingPolicy = {
  indexingMode: IndexingMode.consistent,
  automatic: true,
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }],
  compositeIndexes: [
    compositeOnProcessState("createdAt"),
    compositeOnProcessState("completeBy"),
    // A listing newest first, ties by id; across all states and within one.
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

export const TEST_COSMOS_CONFIG: CosmosEmulatorConfig = {
  databases: [
    {
      id: TEST_DATABASE,
      containers: TEST_CONTAINERS.map((id) => ({
        id,
        partitionKey: { paths: [TEST_PARTITION_KEY_PATH] },
        indexingPolicy: TEST_INDEXING_POLICY,
      })),
    },
  ],
};

export interface TestCosmos {
  emulator: CosmosEmulator;
  client: CosmosClient;
  container(name: TestContainer): Container;
  stop(): Promise<void>;
}

export async function startTestCosmos(): Promise<TestCosmos> {
  const emulator = await startCosmosEmulator({ port: 0, config: TEST_COSMOS_CONFIG });
  const client = emulatorClient(emulator.endpoint, emulator.key);
  return {
    emulator,
    client,
    container: (name) => client.database(TEST_DATABASE).container(name),
    stop: async () => {
      client.dispose();
      await emulator.stop();
    },
  };
}

/** The HTTP status of an SDK call, whether it resolved (response.statusCode) or threw (ErrorResponse.code). */
export async function statusOf(call: Promise<{ statusCode: number }>): Promise<number> {
  try {
    return (await call).statusCode;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "number") return code;
    throw err;
  }
}

/** Count of each value, e.g. statuses of a race: {200: 1, 412: 19}. */
export function tally(values: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
