import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { freesPlace } from "../scheduler/activities";
import { attemptClient } from "../scheduler/durableClient";
import { routeReply } from "../scheduler/replyRouter";
import { handOver } from "./handOver";
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
  const client = attemptClient(() => df.getClient(context));
  const outcome = await routeReply(deps, context, client, message, { alert: isFirstDelivery(context) });
  if (outcome.kind === "refused") {
    await setAsideRejected(deps, context, "agent-replies", message, {
      reason: "refused",
      description: outcome.reason,
    });
    return;
  }
  if (outcome.kind === "recorded") {
    if (freesPlace(outcome.next)) await handOver(context);
    return;
  }
  context.log(`agentReplies: ${outcome.kind}: ${outcome.reason}`);
}
