// Order profiles as the end-to-end benchmark measures them, for the tests of what is worked out from one (the
// cost model, the cost section, the SDK floor): the three-step happy path's messages and durable work, with the
// store requests and any other figure a test needs set by the test.
import type { OrderProfile, StoreKindProfile } from "../../bench/orderProfile";

/** A store request kind ("PUT doc state": method, target, container), one per order unless told otherwise. */
export const storeRow = (
  over: Partial<StoreKindProfile> & Pick<StoreKindProfile, "kind" | "operation">,
): StoreKindProfile => ({
  container: over.kind.split(" ")[2]!,
  perOrder: 1,
  failedPerOrder: 0,
  meanDocumentBytes: 0,
  itemsPerRequest: 0,
  ...over,
});

/** 1 order, 3 agent requests, 3 replies, 6 status messages sent; the order and the agents' traffic delivered. */
export const happyPathBus: OrderProfile["bus"] = {
  sentPerOrder: 13,
  deliveriesPerOrder: 7,
  completesPerOrder: 7,
  otherSettlementsPerOrder: 0,
  lockRenewalsPerOrder: 0,
  duplicatesPerOrder: 0,
  meanMessageBytes: 300,
  largestMessageBytes: 500,
  sentByQueuePerOrder: { orders: 1 },
};

/** 1 instance, 4 activities, 3 events, 3 timers created and cancelled, 5 episodes. */
export const happyPathDurable: OrderProfile["durable"] = {
  instancesPerOrder: 1,
  episodesPerOrder: 5,
  activitiesPerOrder: 4,
  timersCreatedPerOrder: 3,
  timersFiredPerOrder: 0,
  timersCancelledPerOrder: 3,
  eventsRaisedPerOrder: 3,
};

export function orderProfile(
  over: Partial<Omit<OrderProfile, "bus" | "durable" | "functions">> & {
    bus?: Partial<OrderProfile["bus"]>;
    durable?: Partial<OrderProfile["durable"]>;
    functions?: Partial<OrderProfile["functions"]>;
  } = {},
): OrderProfile {
  return {
    orders: over.orders ?? 1_000,
    store: over.store ?? [],
    bus: { ...happyPathBus, ...over.bus },
    durable: { ...happyPathDurable, ...over.durable },
    functions: {
      executionsPerOrder: 17,
      executionMsPerOrder: 0,
      executionsByFunctionPerOrder: {},
      appCpuMsPerOrder: 50,
      ...over.functions,
    },
  };
}
