import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { routeReply } from "../scheduler/replyRouter";

app.serviceBusQueue("agentReplies", {
  connection: "ServiceBusConnection",
  queueName: "agent-replies",
  extraInputs: [df.input.durableClient()],
  handler: async (message: unknown, context: InvocationContext) => {
    const outcome = await routeReply(dependencies(), context, df.getClient(context), message);
    if (outcome !== "delivered") context.log(`agentReplies: ${outcome}`);
  },
});
