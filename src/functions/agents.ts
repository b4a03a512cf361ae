import { app, type InvocationContext } from "@azure/functions";
import { agentRequestQueue, type AgentName } from "../domain";
import { dependencies } from "../app/dependencies";
import { handleAgentRequest, handlingSummary } from "../agents/agent";
import { isFirstDelivery, setAsideRejected } from "./rejectedMessage";
import { tracedMessage } from "./traced";

/** One agent function per remote service, each on its own request queue. */
function registerAgent(agent: AgentName): void {
  app.serviceBusQueue(`${agent}Agent`, {
    connection: "ServiceBusConnection",
    queueName: agentRequestQueue(agent),
    handler: tracedMessage(agentRequestQueue(agent), async (message: unknown, context: InvocationContext) => {
      const deps = dependencies();
      const outcome = await handleAgentRequest(deps, context, agent, message, {
        alert: isFirstDelivery(context),
      });
      // A malformed request (`invalid`) or one the Scheduler never dispatched (`refused`): the alert is raised.
      if (outcome.kind === "invalid" || outcome.kind === "refused") {
        await setAsideRejected(deps, context, agentRequestQueue(agent), message, {
          reason: outcome.kind,
          description: outcome.reason,
        });
        return;
      }
      context.log(handlingSummary(agent, outcome));
    }),
  });
}

registerAgent("inventory");
registerAgent("payment");
registerAgent("shipping");
