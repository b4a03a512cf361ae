/** The Cosmos DB emulator: an in-process stand-in that creates what its config declares. */
export {
  startCosmosEmulator,
  emulatorClient,
  EMULATOR_KEY,
  type CosmosEmulator,
  type CosmosEmulatorOptions,
} from "./emulator";
export type { ServedResponse } from "./gateway";
export {
  loadCosmosConfig,
  CosmosConfigError,
  EMPTY_COSMOS_CONFIG,
  type CosmosEmulatorConfig,
  type CosmosContainerConfig,
  type CosmosIndexingPolicy,
} from "./config";
