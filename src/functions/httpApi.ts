import { app, type HttpRequest, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { getOrderRequest, listOrdersRequest, operatorActionRequest, submitOrderRequest } from "../api/orders";
import { orchestrationStatusRequest } from "../api/orchestration";
import { healthRequest, statsRequest } from "../api/stats";
import { startAttemptWith } from "../scheduler/startAttempt";
import { claimAndStart } from "../scheduler/starter";

/**
 * The front door and the operator API (DESIGN §5): one function per route, all named httpApi-*. Every route but
 * health uses authLevel "function" (function or host keys in Azure; the devhost, like func start, checks none).
 */
app.http("httpApi-submitOrder", {
  route: "orders",
  methods: ["POST"],
  authLevel: "function",
  handler: (request: HttpRequest) => submitOrderRequest(dependencies(), request),
});

app.http("httpApi-listOrders", {
  route: "orders",
  methods: ["GET"],
  authLevel: "function",
  handler: (request: HttpRequest) => listOrdersRequest(dependencies(), request),
});

app.http("httpApi-getOrder", {
  route: "orders/{orderId}",
  methods: ["GET"],
  authLevel: "function",
  handler: (request: HttpRequest) => getOrderRequest(dependencies(), request.params.orderId!),
});

app.http("httpApi-getOrchestration", {
  route: "orders/{orderId}/orchestration",
  methods: ["GET"],
  authLevel: "function",
  extraInputs: [df.input.durableClient()],
  handler: (request: HttpRequest, context: InvocationContext) =>
    orchestrationStatusRequest(dependencies(), df.getClient(context), request.params.orderId!),
});

for (const action of ["retry", "cancel"] as const) {
  app.http(`httpApi-${action}Order`, {
    route: `orders/{orderId}/${action}`,
    methods: ["POST"],
    authLevel: "function",
    extraInputs: [df.input.durableClient()],
    handler: async (request: HttpRequest, context: InvocationContext) => {
      const deps = dependencies();
      const { response, record } = await operatorActionRequest(
        deps,
        context,
        request,
        request.params.orderId!,
        action,
      );
      if (record?.processState === "Pending" || record?.processState === "CompensationPending") {
        // Start the retry or the undo now rather than at the next starter tick.
        await claimAndStart(
          deps,
          context,
          startAttemptWith(df.getClient(context)),
          `api:${context.invocationId}`,
        );
      }
      return response;
    },
  });
}

app.http("httpApi-stats", {
  route: "stats",
  methods: ["GET"],
  authLevel: "function",
  handler: () => statsRequest(dependencies()),
});

app.http("httpApi-health", {
  route: "health",
  methods: ["GET"],
  authLevel: "anonymous",
  handler: () => healthRequest(dependencies()),
});
