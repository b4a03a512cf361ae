import {
  createDefaultHttpClient,
  isRestError,
  type HttpClient,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { abortAfter } from "../resilience/abortAfter";
import { NETWORK_ERROR_CODES, STORE_CALLS } from "../resilience/infraResilience";

/**
 * Statuses of Cosmos DB that say "not now" rather than "no": 408 (the request timed out in the service), 449
 * (retry with: a concurrent update of the same resource), 500 and 503 (a partition moving, a replica failing
 * over, a gateway restarting). The SDK retries a 503 or a timeout only for reads, or across regions; on a
 * single-region account a write fails at once (and 449 only a few times). Every write of this app is safe to send
 * again: a create answers 409 when the first one landed, a replace is conditional on `_etag` and answers 412, and
 * the callers take both as the no-op or the race they are. 429 is left to the SDK's own throttling policy, which
 * waits as long as the service asks (`x-ms-retry-after-ms`).
 */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([408, 449, 500, 503]);

/** Back-off before try `n` (1-based) of a request: exponential from the first delay, capped, with full jitter. */
export function storeBackoffMs(n: number, random: () => number = Math.random): number {
  const ceiling = Math.min(STORE_CALLS.maxBackoffMs, STORE_CALLS.firstBackoffMs * 2 ** (n - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A try cut by this client's own timer, as opposed to the SDK's request timeout or its caller's signal. */
class TryTimedOut extends Error {
  constructor(readonly ms: number) {
    super(`no answer from the store within ${ms} ms`);
  }
}

/**
 * The HTTP client the Cosmos DB SDK sends every request through (`CosmosClientOptions.httpClient`): each try is
 * cut after STORE_CALLS.tryTimeoutMs (a stalled request on a half-open connection otherwise waits the SDK's 60 s,
 * and everything queued behind it waits too), and a transient answer or a failed connection is tried again with
 * back-off for up to STORE_CALLS.retryBudgetMs. Past the budget, the last answer goes back to the SDK, which
 * raises it as usual (an ErrorResponse with its code, or a TimeoutError): the caller then reschedules its work
 * (infraResilience.ts). Doing this under the SDK, not around each call, covers every request the app makes:
 * point reads, writes and each page of a query.
 */
export class ResilientStoreHttpClient implements HttpClient {
  constructor(
    /**
     * Told of each try cut by its timeout (a stalled store) and of each request still failing when its budget is
     * spent (resilience/infraFaultLog.ts): the faults that held a caller up for seconds.
     */
    private readonly onFault: (fault: unknown) => void = () => undefined,
    private readonly inner: HttpClient = createDefaultHttpClient(),
    private readonly random: () => number = Math.random,
  ) {}

  async sendRequest(request: PipelineRequest): Promise<PipelineResponse> {
    const started = Date.now();
    const outer = request.abortSignal;
    for (let tryNumber = 1; ; tryNumber++) {
      // The wait before the next try, or undefined when the budget (or the caller) says stop here.
      const nextWait = (): number | undefined => {
        const wait = storeBackoffMs(tryNumber, this.random);
        return !outer?.aborted && Date.now() - started + wait < STORE_CALLS.retryBudgetMs ? wait : undefined;
      };
      let wait: number | undefined;
      try {
        const response = await this.tryOnce(request, outer);
        if (!RETRIED_STATUSES.has(response.status)) return response;
        if ((wait = nextWait()) === undefined) {
          this.onFault(
            Object.assign(new Error(`the store answered ${response.status}`), { code: response.status }),
          );
          return response;
        }
      } catch (error) {
        if (outer?.aborted) throw error;
        if (error instanceof TryTimedOut)
          this.onFault(Object.assign(new Error(error.message), { code: "TimeoutError" }));
        const transient =
          error instanceof TryTimedOut || (isRestError(error) && NETWORK_ERROR_CODES.has(error.code ?? ""));
        if (!transient) throw error;
        if ((wait = nextWait()) === undefined) {
          this.onFault(error);
          throw error instanceof TryTimedOut ? abortError(error.message) : error;
        }
      }
      await sleep(wait);
    }
  }

  /** One try, with a timer of its own linked to the SDK's signal. */
  private async tryOnce(
    request: PipelineRequest,
    outer: PipelineRequest["abortSignal"],
  ): Promise<PipelineResponse> {
    const cut = abortAfter(outer, STORE_CALLS.tryTimeoutMs);
    const original = request.abortSignal;
    request.abortSignal = cut.signal;
    try {
      return await this.inner.sendRequest(request);
    } catch (error) {
      if (cut.timedOut()) throw new TryTimedOut(STORE_CALLS.tryTimeoutMs);
      throw error;
    } finally {
      request.abortSignal = original;
      cut.done();
    }
  }
}

/** What the SDK turns into its TimeoutError (it recognises an abort by the error's name). */
function abortError(message: string): Error {
  const error = new Error(message);
  error.name = "AbortError";
  return error;
}
