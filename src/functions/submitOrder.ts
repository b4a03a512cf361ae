import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { startAttemptsIn } from "./attemptStarts";
import { requestClaimRound } from "../scheduler/starter";
import { submitOrder } from "../submission/submit";
import { isFirstDelivery, setAsideRejected } from "./rejectedMessage";
import { rescheduleOnInfraFault } from "./rescheduled";
import { tracedMessage } from "./traced";

export async function submitOrderHandler(message: unknown, context: InvocationContext): Promise<void> {
  const deps = dependencies();
  const outcome = await submitOrder(deps, context, message, { alert: isFirstDelivery(context) });
  if (outcome.kind !== "accepted") {
    await setAsideRejected(deps, context, "orders", message, {
      reason: outcome.kind,
      description: outcome.reason,
    });
    return;
  }
  context.log(`order ${outcome.record.orderId} ${outcome.created ? "accepted" : "already accepted"}`);
  if (outcome.created) {
    // Fast path: an idle system starts the order now instead of at the next starter tick. The order is accepted
    // whatever happens here: should the round fail, the starter's timer claims it.
    await requestClaimRound(deps, context, startAttemptsIn(context)).catch((error: unknown) =>
      context.warn(
        `order ${outcome.record.orderId}: claim round failed, left to the starter (${String(error)})`,
      ),
    );
  }
}

app.serviceBusQueue("submitOrder", {
  connection: "ServiceBusConnection",
  queueName: "orders",
  extraInputs: [df.input.durableClient()],
  handler: tracedMessage("orders", rescheduleOnInfraFault("orders", submitOrderHandler, dependencies)),
});
