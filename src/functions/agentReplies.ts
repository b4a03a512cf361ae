import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { attemptClient } from "../scheduler/durableClient";
import { routeReply } from "../scheduler/replyRouter";
import { isFirstDelivery, setAsideRejected } from "./rejectedMessage";
import { rescheduleOnInfraFault } from "./rescheduled";
import { tracedMessage } from "./traced";

app.serviceBusQueue("agentReplies", {
  connection: "ServiceBusConnection",
  queueName: "agent-replies",
  extraInputs: [df.input.durableClient()],
  handler: tracedMessage("agent-replies", rescheduleOnInfraFault("agent-replies", handleReply, dependencies)),
});

async function handleReply(message: unknown, context: InvocationContext): Promise<void> {
  const deps = dependencies();
  const client = attemptClient(df.getClient(context));
  const outcome = await routeReply(deps, context, client, message, { alert: isFirstDelivery(context) });
  if (outcome.kind === "refused") {
    await setAsideRejected(deps, context, "agent-replies", message, {
      reason: "refused",
      description: outcome.reason,
    });
    return;
  }
  if (outcome.kind !== "delivered") context.log(`agentReplies: ${outcome.kind}: ${outcome.reason}`);
}
