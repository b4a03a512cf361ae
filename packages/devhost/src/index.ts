/**
 * devhost: runs any compiled Azure Functions app of the Node.js v4 programming model on this machine, playing
 * the Functions host for it (see README.md). This is the package's public API:
 *
 * - `startDevHost` runs an app in this process (tests, tools); `runCli` is the `devhost` command line.
 * - the durable task engine and its clocks, for tests that drive orchestrations on virtual time;
 * - time-skipping (`timeSkipping`: a HostClock that jumps ahead whenever the host is idle, docs/time-skipping.md);
 * - the Azure latency profiles (`latencyProfile`: each hop delayed as in Azure, docs/latency.md);
 * - what the devhost reads before it loads an app (app root, entry, settings files, connection strings);
 * - how it decides which embedded emulators to start, and the shape of running emulators.
 *
 * The emulators themselves (rhea, the Cosmos DB stand-in) are in `devhost/emulators`, loaded only on demand,
 * and the signed-in user headers of the platform's authentication in `devhost/auth`.
 */
export {
  startDevHost,
  formatFunctionList,
  hostStartedMessage,
  DEFAULT_PORT,
  type DevHost,
  type DevHostOptions,
  type FunctionSummary,
} from "./host";
export { runCli, parseCliArgs, type CliOptions, type RunCliOptions } from "./cli";
export type { ClientPrincipal } from "./auth";
export { consoleLogSink, formatLogRecord, type LogLevel, type LogRecord, type LogSink } from "./logger";
export {
  findAppRoot,
  resolveAppEntry,
  findLocalSettingsFile,
  readLocalSettings,
  parseConnectionString,
  type LocalSettings,
} from "./settings";
export {
  planEmulators,
  settingsForEmulators,
  isListening,
  loopbackServiceBusPort,
  loopbackCosmosPort,
  SERVICE_BUS_CONFIG_SETTING,
  COSMOS_CONFIG_SETTING,
  type EmulatorAddresses,
  type EmulatorHandles,
  type EmulatorPlan,
  type StartEmulators,
  type StartEmulatorsRequest,
} from "./emulatorPlan";
export { DEFAULT_COSMOS_PORT, DEFAULT_SERVICE_BUS_PORT } from "./emulators/ports";
export * from "./durable";
export {
  HostClock,
  TimeSkipper,
  installDateShim,
  runInAppTime,
  type BusyProbe,
  type BusyReporting,
  type TimeSkipperOptions,
} from "./timeSkipping";
export {
  LATENCY_PROFILES,
  LATENCY_PROFILE_NAMES,
  FIGURE_SOURCES,
  type LatencyProfile,
  type LatencyProfileName,
  type ColdStartLatency,
  type DurableLatency,
  type FigureSource,
} from "./latency/profiles";
export { LATENCY_PROFILE_SETTING, LATENCY_SEED_SETTING } from "./latency/options";
/** The devhost's seeded generator (mulberry32): the same seed gives the same floats in [0, 1) on every machine. */
export { mulberry32 } from "./latency/random";
