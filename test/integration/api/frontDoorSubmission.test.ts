/**
 * POST /api/orders completes the submission itself, through the app's own clients and a fault proxy in front of
 * the store: the order document, the state record and the submitter's "received", then the fast path's claim
 * round, with nothing on the `orders` queue. When the state store does not answer after the document was stored,
 * the order goes to the `orders` queue instead (whose submission retries through the outage): 202 either way,
 * nothing lost.
 */
import { InvocationContext } from "@azure/functions";
import { ServiceBusClient } from "@azure/service-bus";
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { FAST_PATH_WAIT_MS, submitOrderRequest } from "../../../src/api/orders";
import { createDependencies, type Dependencies } from "../../../src/app/dependencies";
import { loadConfig } from "../../../src/config";
import { QUEUES, submissionMessageId } from "../../../src/domain";
import { drain } from "../../support/appStack";
import { orderPost } from "../../support/httpRequests";
import { SAMPLE_REPLY_TO, sampleOrder } from "../../support/domain";
import {
  isOperation,
  serviceUnavailable,
  startFaultyStack,
  type FaultyStack,
} from "../../support/faultProxy";

let faulty: FaultyStack;
let deps: Dependencies;
/** The same app's clients straight to the emulators: the truth, whatever the proxies do. */
let truth: Dependencies;
let bus: ServiceBusClient;

beforeAll(async () => {
  faulty = await startFaultyStack();
  deps = createDependencies(loadConfig(faulty.appSettings()));
  truth = createDependencies(loadConfig(faulty.stack.appSettings()));
  bus = new ServiceBusClient(faulty.direct.serviceBusConnectionString);
});
afterAll(async () => {
  await bus?.close();
  await deps?.close();
  await truth?.close();
  await faulty?.stop();
});
beforeEach(async () => {
  await drain(bus, QUEUES.orders);
  await drain(bus, SAMPLE_REPLY_TO);
});

const context = () => new InvocationContext({ functionName: "httpApi-submitOrder" });

/** The fast path as the function passes it: here, a count of its calls. */
function claimRounds() {
  const rounds = { count: 0 };
  return { rounds, claimRound: async () => void rounds.count++ };
}

it("records the order and its state, tells the submitter, and starts a claim round, with nothing on the queue", async () => {
  const order = sampleOrder({ orderId: "DOOR-1" });
  const { rounds, claimRound } = claimRounds();
  const res = await submitOrderRequest(deps, orderPost(order), context(), claimRound);
  expect(res.status).toBe(202);
  expect(await truth.orders.get("DOOR-1")).toMatchObject({ orderId: "DOOR-1" });
  expect(await truth.states.get("DOOR-1")).toMatchObject({ processState: "Pending", attempt: 0 });
  expect(await drain(bus, SAMPLE_REPLY_TO)).toEqual([
    expect.objectContaining({ orderId: "DOOR-1", status: "received" }),
  ]);
  expect(await drain(bus, QUEUES.orders)).toEqual([]);
  expect(rounds.count).toBe(1);

  // The same request again: 202, no second record and no second round.
  const again = await submitOrderRequest(deps, orderPost(order), context(), claimRound);
  expect(again.status).toBe(202);
  expect(rounds.count).toBe(1);
});

it("hands the order to the orders queue when the state store fails after the document was stored", async () => {
  const order = sampleOrder({ orderId: "DOOR-2" });
  const rule = faulty.proxies.cosmos.add({
    when: isOperation("create"),
    path: /\/colls\/state\//,
    action: { kind: "status", error: serviceUnavailable() },
  });
  const { rounds, claimRound } = claimRounds();
  try {
    const res = await submitOrderRequest(deps, orderPost(order), context(), claimRound);
    expect(res.status).toBe(202);
  } finally {
    rule.remove();
  }
  expect(rule.hits).toBeGreaterThan(0);
  expect(await truth.orders.get("DOOR-2")).toMatchObject({ orderId: "DOOR-2" });
  expect(await truth.states.get("DOOR-2")).toBeUndefined();
  const receiver = bus.createReceiver(QUEUES.orders, { receiveMode: "receiveAndDelete" });
  try {
    const [queued] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2_000 });
    expect(queued?.body).toEqual(order);
    expect(queued?.messageId).toBe(submissionMessageId(order));
  } finally {
    await receiver.close();
  }
  expect(rounds.count).toBe(0);
});

it("answers without waiting for a slow round, whose later lines go to the process's log, not the answered invocation", async () => {
  const order = sampleOrder({ orderId: "DOOR-3" });
  const invocationLines: string[] = [];
  const invocation = new InvocationContext({
    functionName: "httpApi-submitOrder",
    logHandler: (_level, ...args) => void invocationLines.push(args.map(String).join(" ")),
  });
  const processLog = vi.spyOn(console, "log").mockImplementation(() => undefined);
  let roundDone!: () => void;
  const roundOver = new Promise<void>((resolve) => (roundDone = resolve));
  try {
    const res = await submitOrderRequest(deps, orderPost(order), invocation, async (log) => {
      log.log("round started");
      await new Promise((resolve) => setTimeout(resolve, FAST_PATH_WAIT_MS * 2));
      log.log("round ended");
      roundDone();
    });
    expect(res.status).toBe(202);
    await roundOver;
    expect(invocationLines).toContain("round started");
    expect(invocationLines).not.toContain("round ended");
    expect(processLog).toHaveBeenCalledWith("round ended");
  } finally {
    processLog.mockRestore();
  }
});
