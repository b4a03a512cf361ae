/**
 * The app's Service Bus sender through the real SDK against the embedded emulator: it sends to its own queues and
 * to the status queues the settings name, and refuses any other queue before opening a link, so no stored replyTo
 * can make it open senders at will.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { orderWorkflowV1 } from "../../../src/domain";
import { drain, startAppStack, type AppStack } from "../../support/appStack";
import { pendingRecord, sampleOrder } from "../../support/domain";

let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack({ STATUS_QUEUES: "status-demo" });
});
afterAll(() => stack?.stop());

const status = {
  orderId: "ORD-1",
  status: "received" as const,
  processState: "Pending" as const,
  at: new Date().toISOString(),
  detail: null,
};

it("sends status messages to a status queue of STATUS_QUEUES", async () => {
  await stack.deps.messaging.sendStatus("status-demo", status);
  expect(await drain(stack.bus, "status-demo")).toEqual([status]);
});

it("refuses a queue the settings do not name, whatever its prefix, before opening a link", async () => {
  for (const queue of ["status-attacker", "orders-copy", "$management"]) {
    await expect(stack.deps.messaging.sendStatus(queue, status), queue).rejects.toThrow(
      `queue ${JSON.stringify(queue)} is not one the app sends to (see STATUS_QUEUES)`,
    );
  }
});

it("posts no status for a record whose replyTo is not a status queue any more, and says so", async () => {
  const warnings: string[] = [];
  const context = stack.context();
  context.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(" "));
  const record = pendingRecord(
    sampleOrder({ orderId: "ORD-OLD", replyTo: "status-removed" }),
    orderWorkflowV1,
  );
  await stack.deps.notifications.status(context, record, "received");
  expect(warnings).toEqual([
    expect.stringContaining(
      'status received for ORD-OLD to status-removed not sent: Error: queue "status-removed" is not one the app sends to',
    ),
  ]);
});
