import { app, type InvocationContext } from "@azure/functions";
import { agentRequestQueue, type AgentName } from "../domain";
import { dependencies } from "../app/dependencies";
import { handleAgentRequest } from "../agents/agent";

/** One agent function per remote service, each on its own request queue (DESIGN §2). */
function registerAgent(agent: AgentName): void {
  app.serviceBusQueue(`${agent}Agent`, {
    connection: "ServiceBusConnection",
    queueName: agentRequestQueue(agent),
    handler: async (message: unknown, context: InvocationContext) => {
      const outcome = await handleAgentRequest(dependencies(), context, agent, message);
      context.log(`${agent}: ${outcome.kind}${"reason" in outcome ? ` (${outcome.reason})` : ""}`);
    },
  });
}

registerAgent("inventory");
registerAgent("payment");
registerAgent("shipping");
