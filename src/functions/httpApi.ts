import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { authorize, ROLES } from "../api/authorize";
import { bulkActionRequest } from "../api/bulk";
import {
  getOrderRequest,
  listOrdersRequest,
  operatorActionRequest,
  orderStatusRequest,
  submitOrderRequest,
} from "../api/orders";
import { orchestrationStatusRequest } from "../api/orchestration";
import type { Principal, Role } from "../api/principal";
import { healthRequest, statsRequest } from "../api/stats";
import { timingsRequest } from "../api/timings";
import { attemptClient, startAttemptWith } from "../scheduler/durableClient";
import { requestClaimRound } from "../scheduler/starter";

/**
 * The front door and the operator API: one function per route, all named httpApi-*.
 *
 * Two kinds of caller, two kinds of credential. Machine clients submit orders and read their status with a
 * function key (authLevel "function"). People read and act through the operator routes as principals signed in
 * by the platform's authentication (Entra ID), each with an app role; those routes are anonymous to the
 * Functions host (a function key would not say who acted) and check the principal here. Health is open.
 */
type Handler = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

/** An operator route: the handler runs only for a principal holding `role`. */
const forRole =
  (
    role: Role,
    handler: (
      request: HttpRequest,
      context: InvocationContext,
      principal: Principal,
    ) => Promise<HttpResponseInit>,
  ): Handler =>
  async (request, context) => {
    const authorized = authorize(request, dependencies().config, role);
    return authorized.ok ? handler(request, context, authorized.principal) : authorized.response;
  };

app.http("httpApi-submitOrder", {
  route: "orders",
  methods: ["POST"],
  authLevel: "function",
  handler: (request: HttpRequest) => submitOrderRequest(dependencies(), request),
});

app.http("httpApi-getOrderStatus", {
  route: "orders/{orderId}/status",
  methods: ["GET"],
  authLevel: "function",
  handler: (request: HttpRequest) => orderStatusRequest(dependencies(), request),
});

app.http("httpApi-listOrders", {
  route: "orders",
  methods: ["GET"],
  authLevel: "anonymous",
  handler: forRole(ROLES.reader, (request) => listOrdersRequest(dependencies(), request)),
});

app.http("httpApi-getOrder", {
  route: "orders/{orderId}",
  methods: ["GET"],
  authLevel: "anonymous",
  handler: forRole(ROLES.reader, (request) => getOrderRequest(dependencies(), request)),
});

app.http("httpApi-getOrchestration", {
  route: "orders/{orderId}/orchestration",
  methods: ["GET"],
  authLevel: "anonymous",
  extraInputs: [df.input.durableClient()],
  handler: forRole(ROLES.reader, (request, context) =>
    orchestrationStatusRequest(dependencies(), attemptClient(df.getClient(context)), request),
  ),
});

/** A claim round right after an operator's action, so that the orders it sent back start now, not at the next tick. */
function claimRoundNow(context: InvocationContext): Promise<unknown> {
  return requestClaimRound(dependencies(), context, startAttemptWith(df.getClient(context)));
}

for (const action of ["retry", "cancel"] as const) {
  app.http(`httpApi-${action}Order`, {
    route: `orders/{orderId}/${action}`,
    methods: ["POST"],
    authLevel: "anonymous",
    extraInputs: [df.input.durableClient()],
    handler: forRole(ROLES.operator, async (request, context, principal) => {
      const deps = dependencies();
      const { response, record } = await operatorActionRequest(deps, context, request, action, principal);
      if (record?.processState === "Pending" || record?.processState === "CompensationPending") {
        // Start the retry or the undo now rather than at the next starter tick.
        await claimRoundNow(context);
      }
      return response;
    }),
  });
}

/**
 * Bulk retry and cancel live under bulk/, not orders/bulk/: "bulk" is a valid orderId, whose own
 * orders/{orderId}/retry a literal orders/bulk/retry would shadow (the router prefers literals). A call only moves
 * orders to Pending / CompensationPending and runs the starter once, which admits at most MAX_IN_FLIGHT; the
 * starter's timer takes the rest as capacity frees up, so a bulk retry of thousands never floods the services.
 */
for (const action of ["retry", "cancel"] as const) {
  const name = action === "retry" ? "Retry" : "Cancel";
  app.http(`httpApi-bulk${name}`, {
    route: `bulk/${action}`,
    methods: ["POST"],
    authLevel: "anonymous",
    extraInputs: [df.input.durableClient()],
    handler: forRole(ROLES.operator, async (request, context, principal) => {
      const deps = dependencies();
      const { response, acted } = await bulkActionRequest(deps, context, request, action, principal);
      if (acted > 0) {
        await claimRoundNow(context);
      }
      return response;
    }),
  });
}

app.http("httpApi-stats", {
  route: "stats",
  methods: ["GET"],
  authLevel: "anonymous",
  handler: forRole(ROLES.reader, () => statsRequest(dependencies())),
});

/** The timing settings the app runs with and the figures they imply: the dashboard's "Tuning the timings" view. */
app.http("httpApi-timings", {
  route: "timings",
  methods: ["GET"],
  authLevel: "anonymous",
  handler: forRole(ROLES.reader, async () => timingsRequest(dependencies())),
});

app.http("httpApi-health", {
  route: "health",
  methods: ["GET"],
  authLevel: "anonymous",
  handler: (_request: HttpRequest, context: InvocationContext) => healthRequest(dependencies(), context),
});
