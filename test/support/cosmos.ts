// One Cosmos stand-in per test file, on an ephemeral port, so test files can run in parallel.
import type { Container, CosmosClient } from "@azure/cosmos";
import {
  emulatorClient,
  startCosmosEmulator,
  type CosmosEmulator,
  type ProjectContainer,
} from "../../devhost/emulators/cosmos";

export interface TestCosmos {
  emulator: CosmosEmulator;
  client: CosmosClient;
  container(name: ProjectContainer): Container;
  stop(): Promise<void>;
}

export async function startTestCosmos(): Promise<TestCosmos> {
  const emulator = await startCosmosEmulator({ port: 0 });
  const client = emulatorClient(emulator.endpoint, emulator.key);
  return {
    emulator,
    client,
    container: (name) => client.database(emulator.database).container(name),
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
