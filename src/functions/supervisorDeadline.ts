import { app, type InvocationContext } from "@azure/functions";
import { dependencies } from "../app/dependencies";
import { ORDER_ID_PATTERN } from "../domain";
import { handleDeadline } from "../supervisor/deadline";
import { isFirstDelivery, setAsideRejected } from "./rejectedMessage";

/** The Supervisor's recovery queue: each notice is one step that passed its deadline (src/supervisor/deadline.ts). */
app.serviceBusQueue("supervisorDeadline", {
  connection: "ServiceBusConnection",
  queueName: "deadlines",
  handler: async (message: unknown, context: InvocationContext) => {
    const deps = dependencies();
    const outcome = await handleDeadline(deps, context, message);
    if (outcome.kind === "invalid") {
      if (isFirstDelivery(context)) {
        const orderId = (message as { orderId?: unknown } | null)?.orderId;
        await deps.notifications.alert(context, {
          kind: "InvalidMessage",
          orderId: typeof orderId === "string" && ORDER_ID_PATTERN.test(orderId) ? orderId : null,
          processState: null,
          reason: `deadlines: ${outcome.reason}`,
        });
      }
      await setAsideRejected(deps, context, "deadlines", message, {
        reason: "invalid",
        description: outcome.reason,
      });
      return;
    }
    if (outcome.kind === "movedOn") context.log(`supervisorDeadline: nothing to decide: ${outcome.reason}`);
  },
});
