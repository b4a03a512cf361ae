import {
  BrokenCircuitError,
  ConsecutiveBreaker,
  ExponentialBackoff,
  TaskCancelledError,
  TimeoutStrategy,
  circuitBreaker,
  handleWhen,
  retry,
  timeout,
  wrap,
  type CircuitBreakerPolicy,
} from "cockatiel";
import { AGENT_BACKOFF } from "../domain";

export type RemoteOutcome =
  | { outcome: "ok"; status: number; body: unknown; calls: number }
  | { outcome: "permanent"; status: number; error: { code: string; message: string }; calls: number }
  | { outcome: "transient"; error: { code: string; message: string }; calls: number };

export interface RemoteCallOptions {
  idempotencyKey: string;
  /** The step's completeBy: no call starts after it, and no attempt runs past it. */
  deadline: Date;
}

export interface RemoteServiceOptions {
  /** Calls per request: the first one and its retries (AGENT_MAX_ATTEMPTS). */
  maxAttempts: number;
  attemptTimeoutMs: number;
  /** First retry delay; later ones grow exponentially with decorrelated jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  breaker: CircuitBreakerPolicy;
  now?: () => Date;
}

/** A response the retry layer may retry: 408, 429 and 5xx. */
class TransientHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

/** The deadline passed before the next call could start: stop without calling. */
class DeadlinePassedError extends Error {}

const isTransientStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * One circuit breaker per remote service and process, shared by every invocation: it exists to stop a whole
 * instance from hammering a service that is down. Five consecutive failures open it for ten seconds.
 */
const breakers = new Map<string, CircuitBreakerPolicy>();
export function breakerFor(service: string): CircuitBreakerPolicy {
  let breaker = breakers.get(service);
  if (!breaker) {
    breaker = circuitBreaker(
      handleWhen((e) => !(e instanceof DeadlinePassedError)),
      {
        halfOpenAfter: 10_000,
        breaker: new ConsecutiveBreaker(5),
      },
    );
    breakers.set(service, breaker);
  }
  return breaker;
}

function errorBody(body: unknown, fallback: string): { code: string; message: string } {
  const b = body as { code?: unknown; message?: unknown } | null;
  return {
    code: typeof b?.code === "string" ? b.code : fallback,
    message: typeof b?.message === "string" ? b.message : fallback,
  };
}

/**
 * Calls one remote service operation with the step's idempotency key, through cockatiel: retries with
 * exponential back-off and jitter that never start a call after the deadline, a circuit breaker per service,
 * and a timeout per attempt. Classifies the result for the agent's reply: 2xx ok, other 4xx permanent (a
 * business refusal; retrying cannot change it), 408/429/5xx, timeouts, network errors and an open circuit
 * transient.
 */
export class RemoteServiceClient {
  constructor(
    private readonly baseUrl: string,
    private readonly options: RemoteServiceOptions,
  ) {}

  async call(operation: string, body: unknown, call: RemoteCallOptions): Promise<RemoteOutcome> {
    const now = this.options.now ?? (() => new Date());
    let calls = 0;
    const policy = wrap(
      retry(
        handleWhen((e) => !(e instanceof BrokenCircuitError) && !(e instanceof DeadlinePassedError)),
        {
          maxAttempts: this.options.maxAttempts - 1,
          backoff: new ExponentialBackoff({
            initialDelay: this.options.initialBackoffMs ?? AGENT_BACKOFF.initialMs,
            maxDelay: this.options.maxBackoffMs ?? AGENT_BACKOFF.maxMs,
          }),
        },
      ),
      this.options.breaker,
      timeout(this.options.attemptTimeoutMs, TimeoutStrategy.Aggressive),
    );
    const url = `${this.baseUrl.replace(/\/$/, "")}/${operation}`;
    try {
      const response = await policy.execute(async ({ signal }) => {
        const remaining = call.deadline.getTime() - now().getTime();
        if (remaining <= 0) throw new DeadlinePassedError("deadline passed before the call");
        calls++;
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": call.idempotencyKey },
          body: JSON.stringify(body),
          signal: AbortSignal.any([signal, AbortSignal.timeout(remaining)]),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          // A non-JSON body is kept as text for the error message.
        }
        if (isTransientStatus(res.status)) throw new TransientHttpError(res.status, parsed);
        return { status: res.status, body: parsed };
      });
      if (response.status >= 200 && response.status < 300) {
        return { outcome: "ok", status: response.status, body: response.body, calls };
      }
      return {
        outcome: "permanent",
        status: response.status,
        error: errorBody(response.body, `HTTP${response.status}`),
        calls,
      };
    } catch (error) {
      return { outcome: "transient", error: describeTransient(error), calls };
    }
  }
}

function describeTransient(error: unknown): { code: string; message: string } {
  if (error instanceof TransientHttpError) return errorBody(error.body, `HTTP${error.status}`);
  if (error instanceof BrokenCircuitError) return { code: "CircuitOpen", message: "circuit breaker is open" };
  if (error instanceof DeadlinePassedError) return { code: "DeadlinePassed", message: error.message };
  if (error instanceof TaskCancelledError) return { code: "Timeout", message: "attempt timed out" };
  const e = error as { name?: string; message?: string; cause?: { code?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return { code: "Timeout", message: "deadline reached" };
  return { code: e?.cause?.code ?? "NetworkError", message: e?.message ?? String(error) };
}
