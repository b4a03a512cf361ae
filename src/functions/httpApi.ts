import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { API, httpTrigger } from "../api/apiOperations";
import { authorize } from "../api/authorize";
import { bulkActionRequest } from "../api/bulk";
import {
  getOrderRequest,
  listOrdersRequest,
  operatorActionRequest,
  orderStatusRequest,
  submitOrderRequest,
} from "../api/orders";
import { orchestrationStatusRequest } from "../api/orchestrationStatus";
import type { Principal, Role } from "../api/principal";
import { healthRequest, statsRequest } from "../api/stats";
import { timingsRequest } from "../api/timings";
import { orderTraceRequest } from "../api/trace";
import { currentTelemetry } from "../telemetry/telemetry";
import { attemptClient } from "../scheduler/durableClient";
import { startAttemptsIn } from "./attemptStarts";
import { requestClaimRound } from "../scheduler/starter";
import { namedInvocation, tracedRequest } from "./traced";

/**
 * The front door and the operator API: one function per route, all named httpApi-*.
 *
 * Two kinds of caller, two kinds of credential. Machine clients submit orders and read their status with a
 * function key (authLevel "function"). People read and act through the operator routes as principals signed in
 * by the platform's authentication (Entra ID), each with an app role; those routes are anonymous to the
 * Functions host (a function key would not say who acted) and check the principal here. Health is open.
 * Each route, method and access comes from the operations table (apiOperations.ts) the OpenAPI document
 * describes.
 */
type Handler = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

/** An operator route: the handler runs only for a principal holding the operation's role. */
const forRole =
  (
    operation: { access: { role: Role } },
    handler: (
      request: HttpRequest,
      context: InvocationContext,
      principal: Principal,
    ) => Promise<HttpResponseInit>,
  ): Handler =>
  async (request, context) => {
    const authorized = authorize(request, dependencies().config, operation.access.role);
    return authorized.ok ? handler(request, context, authorized.principal) : authorized.response;
  };

// The front door starts an order's trace, or continues the caller's; it records the order and, on the fast path,
// starts it (a claim round: an idle system starts the order now instead of at the next starter tick).
app.http(API.submitOrder.functionName, {
  ...httpTrigger(API.submitOrder),
  extraInputs: [df.input.durableClient()],
  handler: tracedRequest(API.submitOrder.route, (request: HttpRequest, context: InvocationContext) =>
    submitOrderRequest(dependencies(), request, context, (log) =>
      requestClaimRound(dependencies(), log, startAttemptsIn(context)),
    ),
  ),
});

app.http(API.getOrderStatus.functionName, {
  ...httpTrigger(API.getOrderStatus),
  handler: (request: HttpRequest) => orderStatusRequest(dependencies(), request),
});

app.http(API.listOrders.functionName, {
  ...httpTrigger(API.listOrders),
  handler: forRole(API.listOrders, (request) => listOrdersRequest(dependencies(), request)),
});

app.http(API.getOrder.functionName, {
  ...httpTrigger(API.getOrder),
  handler: forRole(API.getOrder, (request) => getOrderRequest(dependencies(), request)),
});

app.http(API.getOrchestration.functionName, {
  ...httpTrigger(API.getOrchestration),
  extraInputs: [df.input.durableClient()],
  handler: forRole(API.getOrchestration, (request, context) =>
    orchestrationStatusRequest(dependencies(), attemptClient(df.getClient(context)), request),
  ),
});

/** The order's spans as this process kept them (LOCAL_TRACING=memory): the dashboard's trace view. */
app.http(API.getOrderTrace.functionName, {
  ...httpTrigger(API.getOrderTrace),
  handler: forRole(API.getOrderTrace, (request) =>
    orderTraceRequest(dependencies(), currentTelemetry().buffer, request),
  ),
});

/**
 * An operator's action that may send orders back to work: a single order's retry or cancel, or a bulk one (routed
 * under bulk/, apiOperations.ts says why). When it did, a claim round runs right away, so that they start now
 * rather than at the next starter tick; the round admits at most MAX_IN_FLIGHT, and the starter's timer takes the
 * rest as places free up, so a bulk retry of thousands never floods the services.
 */
function operatorAction(
  operation: (typeof API)["retryOrder" | "cancelOrder" | "bulkRetry" | "bulkCancel"],
  act: (
    request: HttpRequest,
    context: InvocationContext,
    principal: Principal,
  ) => Promise<{ response: HttpResponseInit; sentBackToWork: boolean }>,
): void {
  app.http(operation.functionName, {
    ...httpTrigger(operation),
    extraInputs: [df.input.durableClient()],
    handler: namedInvocation(
      forRole(operation, async (request, context, principal) => {
        const { response, sentBackToWork } = await act(request, context, principal);
        if (sentBackToWork) await requestClaimRound(dependencies(), context, startAttemptsIn(context));
        return response;
      }),
    ),
  });
}

for (const [action, operation] of [
  ["retry", API.retryOrder],
  ["cancel", API.cancelOrder],
] as const) {
  operatorAction(operation, async (request, context, principal) => {
    const { response, record } = await operatorActionRequest(
      dependencies(),
      context,
      request,
      action,
      principal,
    );
    const state = record?.processState;
    return { response, sentBackToWork: state === "Pending" || state === "CompensationPending" };
  });
}

for (const [action, operation] of [
  ["retry", API.bulkRetry],
  ["cancel", API.bulkCancel],
] as const) {
  operatorAction(operation, async (request, context, principal) => {
    const { response, acted } = await bulkActionRequest(dependencies(), context, request, action, principal);
    return { response, sentBackToWork: acted > 0 };
  });
}

app.http(API.stats.functionName, {
  ...httpTrigger(API.stats),
  handler: forRole(API.stats, () => statsRequest(dependencies())),
});

/** The timing settings the app runs with and the figures they imply: the dashboard's "Tuning the timings" view. */
app.http(API.timings.functionName, {
  ...httpTrigger(API.timings),
  handler: forRole(API.timings, async () => timingsRequest(dependencies())),
});

app.http(API.health.functionName, {
  ...httpTrigger(API.health),
  handler: (_request: HttpRequest, context: InvocationContext) => healthRequest(dependencies(), context),
});
