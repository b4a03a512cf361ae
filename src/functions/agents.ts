import { app, type InvocationContext } from "@azure/functions";
import { AGENT_NAMES, agentFunctionName, agentRequestQueue, type AgentName } from "../domain";
import { dependencies } from "../app/dependencies";
import { handleAgentRequest, handlingSummary } from "../agents/agent";
import { isFirstDelivery, setAsideRejected } from "./rejectedMessage";
import { rescheduleOnInfraFault } from "./rescheduled";
import { tracedMessage } from "./traced";

/**
 * One agent function per declared remote service (src/domain/process.ts), each on its own request queue. A request that meets a fault of the app's
 * own store or bus is put back for later (its call, if it was made, is repeated under the same idempotency key);
 * one that comes back after the step's completeBy is dropped, and the Supervisor recovers the attempt.
 */
function registerAgent(agent: AgentName): void {
  const queue = agentRequestQueue(agent);
  app.serviceBusQueue(agentFunctionName(agent), {
    connection: "ServiceBusConnection",
    queueName: queue,
    handler: tracedMessage(queue, rescheduleOnInfraFault(queue, handlerFor(agent), dependencies)),
  });
}

function handlerFor(agent: AgentName) {
  return async (message: unknown, context: InvocationContext): Promise<void> => {
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
  };
}

for (const agent of AGENT_NAMES) registerAgent(agent);
