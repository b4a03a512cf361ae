import {
  answerAlertId,
  misconfiguredAlertId,
  serviceUrlSetting,
  type AgentName,
  type AgentRequest,
} from "../domain";
import type { Notifications } from "../messaging/notifications";
import type { AnswerProblem } from "../remote/answers";
import type { Logger } from "../telemetry/logger";

/**
 * The operator alerts a call's answers call for (src/remote/answers.ts), each under a stable MessageId: the alerts
 * queue's duplicate detection keeps one InvalidAnswer per order step and direction, and one ServiceMisconfigured
 * per service, within its window, however many calls, deliveries and attempts meet the same answer. Neither fails
 * the order by itself: the step is retried as transient, so these are the only word an operator gets before the
 * Supervisor gives up.
 */
export async function alertAnswerProblems(
  deps: { notifications: Notifications; now: () => Date },
  log: Logger,
  agent: AgentName,
  request: Pick<AgentRequest, "orderId" | "stepIndex" | "step" | "kind">,
  operation: string,
  problems: readonly AnswerProblem[],
): Promise<void> {
  const at = deps.now().toISOString();
  for (const problem of problems) {
    if (problem.kind === "InvalidAnswer") {
      await deps.notifications.alert(
        log,
        {
          kind: "InvalidAnswer",
          service: agent,
          orderId: request.orderId,
          processState: null,
          reason:
            `${agent} ${operation} (step ${request.step} ${request.kind}) answered what is not its answer: ` +
            `${problem.detail}; not taken for a success, the step is retried as transient`,
        },
        { messageId: answerAlertId(request.orderId, request.stepIndex, request.kind), at },
      );
    } else {
      await deps.notifications.alert(
        log,
        {
          kind: "ServiceMisconfigured",
          service: agent,
          orderId: null,
          processState: null,
          reason:
            `${agent} ${operation} is not where ${serviceUrlSetting(agent)} says: ${problem.detail}; ` +
            `orders calling it are retried as transient (first seen for ${request.orderId})`,
        },
        { messageId: misconfiguredAlertId(agent), at },
      );
    }
  }
}
