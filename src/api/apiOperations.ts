import type { HttpMethod } from "@azure/functions";
import { z } from "zod";
import { orderIdSchema, ORDER_ID_RULE, processStateSchema } from "../domain";
import type { RequestSchemaName, ResponseSchemaName } from "./apiSchemas";
import { BULK_LIMIT, BULK_STATES } from "./bulk";
import { CONTINUATION_PATTERN } from "./continuation";
import { LIST_LIMIT } from "./params";
import { ROLES, type Role } from "./principal";

/**
 * Every HTTP route of the app, once: the function files register each from here (route, method, the host's auth
 * level) and the OpenAPI document (openApi.ts) describes each from here, so the two cannot name different routes.
 * What a route answers is listed with it; the statuses that follow from its access and its body (401, 403, 503
 * of the sign-in; 413 and 415 of a JSON body) are added by the document for every route they apply to.
 */

/** Who may call a route, and who checks. */
export type Access =
  /** authLevel "function": the Functions host checks the key before the app runs. */
  | { readonly kind: "functionKey" }
  /** anonymous to the host; the app checks the platform's signed-in principal for the role (authorize.ts). */
  | { readonly kind: "signedIn"; readonly role: Role }
  /** anyone. */
  | { readonly kind: "open" };

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

export interface ApiResponse {
  readonly description: string;
  /** A JSON body of the named schema, an HTML page, or JavaScript (the dashboard's modules); absent: no body. */
  readonly body?: ResponseSchemaName | "html" | "javascript";
  readonly headers?: readonly ResponseHeaderName[];
}

export interface QueryParameter {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType;
}

export interface ApiOperation {
  /** The Azure Function serving the route: what logs and Application Insights name it by. */
  readonly functionName: string;
  readonly method: HttpMethod;
  /** The route as app.http takes it, under the host's route prefix (host.json, `api`). */
  readonly route: string;
  readonly tag: keyof typeof TAGS;
  readonly summary: string;
  readonly description?: string;
  readonly access: Access;
  readonly query?: readonly QueryParameter[];
  readonly body?: {
    readonly schema: RequestSchemaName;
    /** false: an empty body stands for `{}`. */
    readonly required: boolean;
    readonly example?: unknown;
  };
  readonly responses: Readonly<Record<number, ApiResponse>>;
}

export const TAGS = {
  orders: "Submitting orders and reading their status: machine clients, with a function key",
  operators: "Reading and acting on orders: people signed in with Entra ID, holding an app role",
  platform: "Health, the dashboard and this description",
};

/** The parameters a route template may hold, with the grammar the handler checks (routeOrderId). */
export const PATH_PARAMETERS: Record<string, { description: string; schema: z.ZodType }> = {
  orderId: { description: `The order: ${ORDER_ID_RULE}; anything else is a 400`, schema: orderIdSchema },
  module: {
    description: "A module of the dashboard's browser code, by file name: one the build emitted, else a 404",
    schema: z.string().regex(/^[A-Za-z][A-Za-z0-9]*\.js$/),
  },
};

export const RESPONSE_HEADERS = {
  Location: { description: "Where to go: the order's status URL, or the sign-in page", schema: z.string() },
  "Retry-After": { description: "Seconds to wait before calling again", schema: z.string().regex(/^\d+$/) },
  "WWW-Authenticate": { description: "How to sign in", schema: z.string() },
};

const orderNotFound: ApiResponse = { description: "No such order", body: "Problem" };
const badOrderId: ApiResponse = { description: "The orderId in the path is not one", body: "Problem" };
const backlogFull = (what: string): ApiResponse => ({
  description: `${what} while the Pending backlog is at MAX_PENDING_BACKLOG; call again after Retry-After`,
  body: "Problem",
  headers: ["Retry-After"],
});

const listQuery: QueryParameter[] = [
  { name: "state", description: "Only orders in this processState", schema: processStateSchema },
  {
    name: "limit",
    description: "Orders per page",
    schema: z.int().min(1).max(LIST_LIMIT.max).default(LIST_LIMIT.default),
  },
  {
    name: "continuation",
    description:
      "The continuation of the previous page, as it gave it: opaque and signed by this API; any other token is a 400",
    schema: z.string().regex(CONTINUATION_PATTERN),
  },
];

const operatorAction = (action: "retry" | "cancel", summary: string, description: string) =>
  ({
    functionName: `httpApi-${action}Order`,
    method: "POST",
    route: `orders/{orderId}/${action}`,
    tag: "operators",
    summary,
    description: `${description} The audit trail records the signed-in operator and the reason.`,
    access: { kind: "signedIn", role: ROLES.operator },
    body: { schema: "OperatorAction", required: false },
    responses: {
      202: { description: "Done; the starter takes the order from here", body: "OperatorActionAccepted" },
      400: { description: "A bad orderId, or a body that is not JSON or not {reason?}", body: "Problem" },
      404: orderNotFound,
      409: {
        description: "The order's state does not allow it: the refusal and its code",
        body: "OperatorRefusal",
      },
    },
  }) as const satisfies ApiOperation;

/**
 * Bulk retry and cancel live under bulk/, not orders/bulk/: "bulk" is a valid orderId, whose own
 * orders/{orderId}/retry a literal orders/bulk/retry would shadow (the router prefers literals).
 */
const bulkAction = (action: "retry" | "cancel", more: Readonly<Record<number, ApiResponse>> = {}) =>
  ({
    functionName: `httpApi-bulk${action === "retry" ? "Retry" : "Cancel"}`,
    method: "POST",
    route: `bulk/${action}`,
    tag: "operators",
    summary: `${action === "retry" ? "Retry" : "Cancel"} every order a filter matches, a page per call`,
    description:
      `filter.state is one of ${BULK_STATES[action].join(", ")}. One call acts on at most \`limit\` orders ` +
      `(default ${BULK_LIMIT.default}, at most ${BULK_LIMIT.max}); call again with the continuation until it is ` +
      "null. dryRun counts and samples without acting.",
    access: { kind: "signedIn", role: ROLES.operator },
    body: { schema: action === "retry" ? "BulkRetry" : "BulkCancel", required: true },
    responses: {
      200: { description: "The counts, a sample and the continuation", body: "BulkAnswer" },
      400: { description: "A body that is not JSON, or a field that is wrong, named", body: "Problem" },
      ...more,
    },
  }) as const satisfies ApiOperation;

export const API = {
  submitOrder: {
    functionName: "httpApi-submitOrder",
    method: "POST",
    route: "orders",
    tag: "orders",
    summary: "Submit an order",
    description:
      "Validated as the `orders` queue validates it, stored, and its submission recorded (or, while the state " +
      "store does not answer, enqueued to `orders`, whose submission records it). The same orderId with the " +
      "same data again is 202 (a no-op); with different data it is 409.",
    access: { kind: "functionKey" },
    body: {
      schema: "Order",
      required: true,
      example: {
        orderId: "ORD-1001",
        customerId: "C-42",
        items: [{ sku: "SKU-1", quantity: 2, unitPrice: 9.99 }],
        currency: "EUR",
        shippingAddress: { line1: "1 Main St", city: "Berlin", postalCode: "10115", country: "DE" },
        replyTo: "status-demo",
      },
    },
    responses: {
      202: {
        description: "Accepted: stored and recorded, or queued",
        body: "OrderAccepted",
        headers: ["Location"],
      },
      400: { description: "Not JSON, or an invalid field, named", body: "Problem" },
      409: { description: "The orderId was already submitted with different data", body: "Problem" },
      429: backlogFull("Refused"),
      503: {
        description:
          "The order store or the bus did not answer within its retries; nothing was accepted unless the same " +
          "request is sent again (it is then 202). Call again after Retry-After",
        body: "Problem",
        headers: ["Retry-After"],
      },
    },
  },
  getOrderStatus: {
    functionName: "httpApi-getOrderStatus",
    method: "GET",
    route: "orders/{orderId}/status",
    tag: "orders",
    summary: "What the submitter may know of its order",
    access: { kind: "functionKey" },
    responses: {
      200: {
        description: "The order's processState and the status messages it was sent",
        body: "OrderStatus",
      },
      400: badOrderId,
      404: orderNotFound,
    },
  },
  listOrders: {
    functionName: "httpApi-listOrders",
    method: "GET",
    route: "orders",
    tag: "operators",
    summary: "State records, most recently updated first, a page at a time",
    access: { kind: "signedIn", role: ROLES.reader },
    query: listQuery,
    responses: {
      200: { description: "A page of state records", body: "OrderPage" },
      400: { description: "A bad state, limit or continuation, named", body: "Problem" },
    },
  },
  getOrder: {
    functionName: "httpApi-getOrder",
    method: "GET",
    route: "orders/{orderId}",
    tag: "operators",
    summary: "An order, its state record (steps, audit trail) and the status messages it was sent",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: {
      200: { description: "The order and its state", body: "OrderDetails" },
      400: badOrderId,
      404: orderNotFound,
    },
  },
  getOrchestration: {
    functionName: "httpApi-getOrchestration",
    method: "GET",
    route: "orders/{orderId}/orchestration",
    tag: "operators",
    summary: "The durable status of the order's current attempt",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: {
      200: { description: "The orchestration's status", body: "OrchestrationStatus" },
      400: badOrderId,
      404: {
        description: "No such order, an order never claimed, or an instance the task hub does not know",
        body: "Problem",
      },
    },
  },
  getOrderTrace: {
    functionName: "httpApi-getOrderTrace",
    method: "GET",
    route: "orders/{orderId}/trace",
    tag: "operators",
    summary: "The order's trace: its spans as a tree, as this process kept them (LOCAL_TRACING=memory)",
    description:
      "For the devhost: the spans of the trace the order's state record names, from this process's bounded " +
      "buffer. In Azure, where LOCAL_TRACING is off, the trace is in Application Insights and this answers 404.",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: {
      200: {
        description: "The trace's spans, root first, each followed by its children",
        body: "OrderTrace",
      },
      400: badOrderId,
      404: {
        description:
          "No such order, an order without a trace, spans no longer kept, or no span buffer in this process",
        body: "Problem",
      },
    },
  },
  retryOrder: operatorAction(
    "retry",
    "Send an Error or CompensationFailed order back to work",
    "Error goes back to Pending, CompensationFailed to CompensationPending.",
  ),
  cancelOrder: operatorAction(
    "cancel",
    "Undo a Pending, Processing or Error order",
    "The order goes to CompensationPending, and its applied steps are undone in reverse order.",
  ),
  bulkRetry: bulkAction("retry", { 429: backlogFull("A retry of Error orders") }),
  bulkCancel: bulkAction("cancel"),
  stats: {
    functionName: "httpApi-stats",
    method: "GET",
    route: "stats",
    tag: "operators",
    summary: "Counts per state, in flight, backlog, oldest pending age, the remote services' breakers",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: { 200: { description: "The numbers, as of `at`", body: "Stats" } },
  },
  timings: {
    functionName: "httpApi-timings",
    method: "GET",
    route: "timings",
    tag: "operators",
    summary: "The timing settings the app runs with and the recovery times and store load they imply",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: { 200: { description: "The settings, the formulas' inputs and figures", body: "Timings" } },
  },
  health: {
    functionName: "httpApi-health",
    method: "GET",
    route: "health",
    tag: "platform",
    summary: "Whether the state store and the bus answer",
    access: { kind: "open" },
    responses: {
      200: { description: "Both answer", body: "Health" },
      503: { description: "One does not, named (the error itself goes to the log)", body: "Health" },
    },
  },
  dashboard: {
    functionName: "dashboard",
    method: "GET",
    route: "dashboard",
    tag: "platform",
    summary: "The operator dashboard, an HTML page that uses this API with the same sign-in",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: {
      200: { description: "The page", body: "html" },
      302: {
        description: "Not signed in (OPERATOR_AUTH=platform): to the platform's Entra ID sign-in, and back",
        headers: ["Location"],
      },
      401: {
        description: "Not signed in (OPERATOR_AUTH=header), or a principal that is not one",
        body: "html",
      },
      403: { description: "Signed in without the role", body: "html" },
      503: { description: "Operator sign-in is not set up", body: "html" },
    },
  },
  dashboardModule: {
    functionName: "dashboardModule",
    method: "GET",
    route: "dashboard/{module}",
    tag: "platform",
    summary: "A module of the dashboard's browser code, as the page loads it (src/dashboard/browser)",
    access: { kind: "signedIn", role: ROLES.reader },
    responses: {
      200: { description: "The module: JavaScript, an ES module", body: "javascript" },
      404: { description: "No module of that name", body: "Problem" },
    },
  },
  openApi: {
    functionName: "openApi",
    method: "GET",
    route: "openapi.json",
    tag: "platform",
    summary: "This description of the HTTP API (OpenAPI 3.1)",
    access: { kind: "open" },
    responses: { 200: { description: "The OpenAPI document", body: "OpenApiDocument" } },
  },
} as const satisfies Record<string, ApiOperation>;

/** What app.http takes from an operation: its route, its method, and the host's auth level for its access. */
export function httpTrigger(operation: ApiOperation): {
  route: string;
  methods: HttpMethod[];
  authLevel: "function" | "anonymous";
} {
  return {
    route: operation.route,
    methods: [operation.method],
    authLevel: operation.access.kind === "functionKey" ? "function" : "anonymous",
  };
}
