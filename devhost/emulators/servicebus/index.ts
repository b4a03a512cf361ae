/**
 * The Service Bus emulator: what the devhost, `npm run emulators`, tests and benchmarks import.
 * See docs/servicebus-emulator.md.
 */
export {
  ServiceBusEmulator,
  DEFAULT_PORT,
  DEFAULT_SAS_KEY,
  DEFAULT_SAS_KEY_NAME,
  type ServiceBusEmulatorOptions,
} from "./emulator";
export {
  loadEmulatorConfig,
  queueSettingsOf,
  EmulatorConfigError,
  QUEUE_DEFAULTS,
  type EmulatorConfigFile,
  type QueueProperties,
  type QueueSettings,
} from "./config";
export { parseIsoDuration, DurationSyntaxError } from "./duration";
export type { QueueCounts } from "./queue";
