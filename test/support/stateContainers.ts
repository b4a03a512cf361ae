/**
 * The state store's integration tests' setup: the embedded Cosmos DB emulator for the test file, and a fresh
 * state container per test, defined as the app's own (infra/cosmos-emulator.config.json), which the deployment's
 * Bicep reads too: the queries run against the indexes Azure has.
 */
import type { Container } from "@azure/cosmos";
import { afterAll, beforeAll } from "vitest";
import { orderWorkflowV1, submit, type StateRecord } from "../../src/domain";
import { createCosmosClient } from "../../src/store/cosmos";
import { loadCosmosConfig, startCosmosEmulator, type CosmosEmulator } from "devhost/emulators";
import { emulatorConfigFiles } from "../../tools/repository";
import { T0, sampleOrder } from "./domain";

type OnRequest = NonNullable<NonNullable<Parameters<typeof startCosmosEmulator>[0]>["onRequest"]>;

/** Starts the emulator before the file's tests and stops it after; `fresh` makes a new state container. */
export function useStateContainers(onRequest?: OnRequest): { fresh(): Promise<Container> } {
  const appCosmos = loadCosmosConfig(emulatorConfigFiles().cosmos).databases[0]!;
  const stateDefinition = appCosmos.containers.find((c) => c.id === "state")!;
  let emulator: CosmosEmulator;
  let client: ReturnType<typeof createCosmosClient>;
  let run = 0;

  beforeAll(async () => {
    emulator = await startCosmosEmulator({
      port: 0,
      config: emulatorConfigFiles().cosmos,
      ...(onRequest ? { onRequest } : {}),
    });
    client = createCosmosClient({ kind: "key", endpoint: emulator.endpoint + "/", key: emulator.key });
  });

  afterAll(async () => {
    client.dispose();
    await emulator.stop();
  });

  return {
    // A fresh container per test keeps the tests independent without restarting the emulator.
    async fresh() {
      const { container } = await client
        .database(appCosmos.id)
        .containers.createIfNotExists({ ...stateDefinition, id: `state-${++run}` });
      return container;
    },
  };
}

export const newRecord = (orderId: string, createdAt = T0): StateRecord =>
  submit(sampleOrder({ orderId }), { now: createdAt, workflow: orderWorkflowV1 });
