/**
 * This app's local stack in one process: the devhost's Service Bus and Cosmos DB emulators, configured with the
 * app's queue and container files, and the remote services simulator; each on an ephemeral port unless told
 * otherwise. `appSettings()` gives the shipped settings pointed at them. The app itself runs elsewhere (a devhost
 * in this process, or a child process: appProcess.ts), so that it can be killed and restarted while the stack,
 * which keeps everything in memory, stays up. `npm run emulators`, the demo, the soak, the benchmarks and the
 * app's tests all start it.
 */
import type { IncomingMessage } from "node:http";
import { settingsForEmulators, type EmulatorAddresses } from "devhost";
import { EMULATOR_KEY, startEmulators, type ServedResponse } from "devhost/emulators";
import { emulatorConfigFiles, sampleSettings } from "./repository";
import { startSimulator, type Simulator } from "./simulator";
import { settingsForSimulator } from "./simulator/settings";

export interface LocalStackOptions {
  /** Where each service listens; 0 (the default) picks an ephemeral port. */
  ports?: { serviceBus?: number; cosmos?: number; simulator?: number };
  /** Seeds the simulator's probability faults; default Math.random. */
  random?: () => number;
  /** Sees every request to the Cosmos DB stand-in (the benchmarks count them). */
  onCosmosRequest?: (request: IncomingMessage) => void;
  /** Sees each of those requests again once answered, with the response's status and size. */
  onCosmosResponse?: (request: IncomingMessage, response: ServedResponse) => void;
  /** The Service Bus emulator's notable events. */
  log?: (line: string) => void;
}

/** Where the stack's services listen: the devhost's emulator addresses, all present, and the simulator's URL. */
export interface LocalStackAddresses extends Required<EmulatorAddresses> {
  simulatorUrl: string;
}

/** What a client of the app's state store needs to read it directly. */
export interface CosmosAccount {
  endpoint: string;
  key: string;
  /** COSMOS_DATABASE of the shipped settings, which the Cosmos DB config creates. */
  database: string;
}

export interface LocalStack {
  emulators: LocalStackAddresses;
  cosmos: CosmosAccount;
  simulator: Simulator;
  /** The shipped settings (local.settings.sample.json) pointed at this stack, with `overrides` applied last. */
  appSettings(overrides?: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const configs = emulatorConfigFiles();
  const emulators = await startEmulators({
    ports: { serviceBus: options.ports?.serviceBus ?? 0, cosmos: options.ports?.cosmos ?? 0 },
    serviceBusConfig: configs.serviceBus,
    cosmosConfig: configs.cosmos,
    ...(options.onCosmosRequest ? { onCosmosRequest: options.onCosmosRequest } : {}),
    ...(options.onCosmosResponse ? { onCosmosResponse: options.onCosmosResponse } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  let simulator: Simulator;
  try {
    simulator = await startSimulator({
      port: options.ports?.simulator ?? 0,
      ...(options.random ? { random: options.random } : {}),
    });
  } catch (error) {
    await emulators.stop();
    throw error;
  }
  const addresses: LocalStackAddresses = {
    serviceBusConnectionString: emulators.serviceBusConnectionString!,
    cosmosConnectionString: emulators.cosmosConnectionString!,
    cosmosEndpoint: emulators.cosmosEndpoint!,
    simulatorUrl: simulator.url,
  };
  const shipped = sampleSettings();
  return {
    emulators: addresses,
    cosmos: {
      endpoint: addresses.cosmosEndpoint,
      key: EMULATOR_KEY,
      database: shipped.COSMOS_DATABASE ?? "",
    },
    simulator,
    appSettings: (overrides = {}) => ({ ...pointAt(addresses, shipped), ...overrides }),
    stop: async () => {
      await simulator.stop().catch(() => undefined);
      await emulators.stop();
    },
  };
}

/** `settings` with every emulator connection and simulator URL pointed at the stack. */
export function pointAt(
  stack: LocalStackAddresses,
  settings: Record<string, string>,
): Record<string, string> {
  return {
    ...settings,
    ...settingsForEmulators(stack, settings),
    ...settingsForSimulator(stack.simulatorUrl, settings),
  };
}
