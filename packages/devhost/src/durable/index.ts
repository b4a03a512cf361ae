// The devhost's durable task engine: orchestrations, activities and entities driven through the real
// durable-functions replay, a persisted task hub, durable timers on a real or virtual clock, and the
// durable client's HTTP API. See docs/durable.md in this package.
export {
  DurableEngine,
  DurableRequestError,
  type DurableEngineOptions,
  type DurableFunctionRegistration,
  type DurableHop,
  type DurableInvoke,
  type HopDelay,
  type EntityIdLike,
  type PendingTimer,
  type StartOptions,
} from "./engine";
export { RealClock, VirtualClock, type Clock, type TimerHandle } from "./clock";
export { DURABLE_HTTP_PATHS, RPC_PATH, WEBHOOK_PATH } from "./webhooks";
export { tallyTaskHub, type InstanceTally } from "./hubTally";
export type { EntityPage, EntityQuery, EntityStatus } from "./entityQuery";
export type { InstancePage, InstanceQuery, InstanceStatus, StatusOptions } from "./status";
export type { RuntimeStatus } from "./store";
