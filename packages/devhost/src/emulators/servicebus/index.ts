/** The Service Bus emulator: an AMQP 1.0 broker on rhea serving the queues and topics of a Config.json. */
export {
  ServiceBusEmulator,
  DEFAULT_SAS_KEY,
  DEFAULT_SAS_KEY_NAME,
  type ServiceBusEmulatorOptions,
} from "./emulator";
export {
  loadEmulatorConfig,
  queueSettingsOf,
  topicSettingsOf,
  EmulatorConfigError,
  EMPTY_CONFIG,
  QUEUE_DEFAULTS,
  type EmulatorConfigFile,
  type QueueProperties,
  type QueueSettings,
  type TopicSettings,
  type SubscriptionSettings,
} from "./config";
export { parseSqlFilter, parseSqlRuleAction, SqlSyntaxError } from "./sqlFilter";
export { parseIsoDuration, DurationSyntaxError } from "./duration";
// The queue itself is exported for instrumentation only: a benchmark counts sends and deliveries on it.
export { MessageQueue, type QueueCounts } from "./queue";
