import { app, type InvocationContext } from "@azure/functions";
import { dependencies } from "../app/dependencies";
import { handleDeadline } from "../supervisor/deadline";
import { isFirstDelivery, setAsideRejected } from "./rejectedMessage";
import { rescheduleOnInfraFault } from "./rescheduled";
import { tracedMessage } from "./traced";

/** The Supervisor's recovery queue: each notice is one step that passed its deadline (src/supervisor/deadline.ts). */
app.serviceBusQueue("supervisorDeadline", {
  connection: "ServiceBusConnection",
  queueName: "deadlines",
  handler: tracedMessage("deadlines", rescheduleOnInfraFault("deadlines", handleNotice, dependencies)),
});

async function handleNotice(message: unknown, context: InvocationContext): Promise<void> {
  const deps = dependencies();
  const outcome = await handleDeadline(deps, context, message, { alert: isFirstDelivery(context) });
  if (outcome.kind === "invalid") {
    await setAsideRejected(deps, context, "deadlines", message, {
      reason: "invalid",
      description: outcome.reason,
    });
    return;
  }
  if (outcome.kind === "movedOn") context.log(`supervisorDeadline: nothing to decide: ${outcome.reason}`);
}
