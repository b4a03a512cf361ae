/**
 * How the app rides out faults of its own infrastructure, the state store and the bus (docs/failure-catalogue.md,
 * "The app's own store and bus"). Every call has a timeout of seconds, so no stalled request holds up what waits
 * behind it; a transient fault is retried with back-off inside the call; and what is still failing past that is
 * rescheduled by the caller rather than dropped (a message on `orders` comes back later, an activity is retried by
 * its orchestration, a timer's work runs at its next tick).
 */
import { isServiceBusError } from "@azure/service-bus";
import { cosmosStatus } from "../store/cosmosErrors";

/** One request to Cosmos DB (storeHttpClient.ts). */
export const STORE_CALLS = {
  /** A try with no answer by then is cut and tried again: Cosmos DB answers a point operation in milliseconds. */
  tryTimeoutMs: 5_000,
  /** How long one request keeps trying, back-off included, before its caller hears of the fault. */
  retryBudgetMs: 20_000,
  firstBackoffMs: 100,
  maxBackoffMs: 2_000,
  /**
   * The SDK's own limit on a request, around all the tries above (its default is 60 s). Only a request that
   * somehow outlives the budget meets it.
   */
  sdkRequestTimeoutMs: 30_000,
} as const;

/**
 * One Service Bus operation (a send, a link's creation): `@azure/service-bus` waits 60 s for an answer by default,
 * and tries 4 times, so a send caught by a connection reset or a silent network completed only after minutes.
 * Here each try waits 10 s, and 3 tries with exponential back-off end within about 35 s.
 */
export const BUS_CALLS = {
  timeoutInMs: 10_000,
  maxRetries: 2,
  retryDelayInMs: 500,
  maxRetryDelayInMs: 4_000,
} as const;

/**
 * A send still unanswered after this long is taken for a fault of the bus (resilience/infraFaultLog.ts) without
 * waiting for its timeout: a healthy send takes milliseconds, and a silent network is only ever noticed by a
 * timeout, which would come after the deadline of a step whose request or reply it held up.
 */
export const SLOW_SEND_MS = 2_000;

/** Cosmos DB answers that a later try may not get: throttling, unavailability, timeouts, retry-with. */
const TRANSIENT_STORE_STATUSES: ReadonlySet<number> = new Set([408, 429, 449, 500, 503]);

/** Connection-level failures, as Node and the Azure SDKs report them. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "REQUEST_SEND_ERROR",
]);

/** Service Bus error codes that say "try later" (the SDK has used up its own tries on them). */
const TRANSIENT_BUS_CODES: ReadonlySet<string> = new Set([
  "ServiceBusy",
  "ServiceTimeout",
  "ServiceCommunicationProblem",
  "GeneralError",
  "QuotaExceeded",
]);

/**
 * Is this a fault of the app's own store or bus that a later try may not meet? A refusal that stays a refusal
 * (400, 401, 403, 404, 409, 412, 413, an entity that does not exist) is not: retrying it would only repeat it.
 */
export function isTransientInfraError(error: unknown): boolean {
  const status = cosmosStatus(error);
  if (status !== undefined) return TRANSIENT_STORE_STATUSES.has(status);
  if (isServiceBusError(error)) return TRANSIENT_BUS_CODES.has(error.code);
  const code = (error as { code?: unknown } | null)?.code;
  // "TimeoutError": @azure/cosmos's own, for a request that outlived its requestTimeout.
  if (typeof code === "string" && (NETWORK_ERROR_CODES.has(code) || code === "TimeoutError")) return true;
  const name = (error as { name?: unknown } | null)?.name;
  // Timeouts and aborted links of the AMQP layer under @azure/service-bus.
  return name === "TimeoutError" || name === "OperationTimeoutError" || name === "AbortError";
}

/** Which part of the app's infrastructure an error comes from, when the error says so. */
export function infraPartOf(error: unknown): "store" | "bus" | undefined {
  if (cosmosStatus(error) !== undefined || (error as { code?: unknown } | null)?.code === "TimeoutError")
    return "store";
  if (isServiceBusError(error)) return "bus";
  return undefined;
}

/** One short line about an infrastructure fault, for a log line or an alert (no stack, no payload). */
export function describeInfraError(error: unknown): string {
  const status = cosmosStatus(error);
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n", 1)[0]!.slice(0, 200);
  const label =
    status !== undefined ? `store ${status}` : typeof code === "string" ? code : String(name ?? "error");
  return `${label}: ${first}`;
}
