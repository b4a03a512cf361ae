import {
  ExponentialBackoff,
  TaskCancelledError,
  TimeoutStrategy,
  handleWhen,
  retry,
  timeout,
  wrap,
} from "cockatiel";
import { AGENT_BACKOFF } from "../domain";
import { abortAfter } from "../resilience/abortAfter";
import type { CallAdmission } from "./sharedBreaker";
import { InjectedFaultError, type ChaosInjector } from "./chaosInjector";
import type { Logger } from "../telemetry/logger";
import { failed, inSpan, SpanKind, traceHeaders } from "../telemetry/tracing";

/**
 * `calls`: the attempts that started, each admitted by the circuit breaker (an attempt chaos failed counts: the
 * breaker, the retries and the retry budget see it as a call). `injected`: those of them chaos delayed or failed
 * on purpose (CHAOS_*); 0 while chaos is off.
 */
export type RemoteOutcome =
  | { outcome: "ok"; status: number; body: unknown; calls: number; injected: number }
  | {
      outcome: "permanent";
      status: number;
      error: { code: string; message: string };
      calls: number;
      injected: number;
    }
  | {
      outcome: "transient";
      error: { code: string; message: string };
      calls: number;
      injected: number;
      /** Set when the service's circuit breaker refused the last call: until when it refuses calls. */
      unavailableUntil?: Date;
    };

export interface RemoteCallOptions {
  idempotencyKey: string;
  /** The order the call is for: the circuit breaker opens only on failures from several orders. */
  orderId: string;
  log: Logger;
  /** The step's completeBy: no call starts after it, and no attempt runs past it. */
  deadline: Date;
}

export interface RemoteServiceOptions {
  /** The remote service's name, for its calls' spans (peer.service). */
  service?: string;
  /** Calls per request: the first one and its retries (AGENT_MAX_ATTEMPTS). */
  maxAttempts: number;
  attemptTimeoutMs: number;
  /** First retry delay; later ones grow exponentially with decorrelated jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  breaker: CallGate;
  /**
   * Chaos for this service (CHAOS_*, staging only): run inside each attempt, before the real call, so the
   * attempt's timeout, the retries, the deadline and the breaker meet it as they would a slow or failing call.
   * Absent while chaos is off.
   */
  chaos?: ChaosInjector;
  now?: () => Date;
}

/**
 * The circuit breaker as the client sees it (src/remote/sharedBreaker.ts, shared by every instance): asked before each
 * call, told how each call ended.
 */
export interface CallGate {
  admit(orderId: string, log: Logger): Promise<CallAdmission>;
  onFailure(orderId: string, log: Logger): Promise<void>;
  onSuccess(orderId: string, log: Logger): Promise<void>;
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

/** The service's circuit breaker is open: no call was made. */
class ServiceUnavailableError extends Error {
  constructor(readonly until: Date) {
    super(`circuit breaker open until ${until.toISOString()}`);
  }
}

function errorBody(body: unknown, fallback: string): { code: string; message: string } {
  const b = body as { code?: unknown; message?: unknown } | null;
  return {
    code: typeof b?.code === "string" ? b.code : fallback,
    message: typeof b?.message === "string" ? b.message : fallback,
  };
}

/**
 * The retries with back-off and the timeout of each attempt of a client's calls. Made once per client: cockatiel
 * keeps each execution's retries, back-off and timer apart, so calls can share it.
 */
function callPolicy(options: RemoteServiceOptions) {
  return wrap(
    retry(
      handleWhen((e) => !(e instanceof ServiceUnavailableError) && !(e instanceof DeadlinePassedError)),
      {
        maxAttempts: options.maxAttempts - 1,
        backoff: new ExponentialBackoff({
          initialDelay: options.initialBackoffMs ?? AGENT_BACKOFF.initialMs,
          maxDelay: options.maxBackoffMs ?? AGENT_BACKOFF.maxMs,
        }),
      },
    ),
    // Each attempt reads its answer whole before it returns, so there is nothing left to abort then (aborting
    // would only make an AbortError nobody reads, three times an order).
    timeout(options.attemptTimeoutMs, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false }),
  );
}

/**
 * Calls one remote service operation with the step's idempotency key, through cockatiel: retries with
 * exponential back-off and jitter that never start a call after the deadline, the service's shared circuit
 * breaker asked before each call, a timeout per attempt, and chaos when staging asks for it. Classifies the
 * result for the agent's reply: 2xx ok, other 4xx permanent (a business refusal; retrying cannot change it),
 * 408/429/5xx, timeouts, network errors, injected faults and an open circuit transient.
 */
export class RemoteServiceClient {
  constructor(
    private readonly baseUrl: string,
    private readonly options: RemoteServiceOptions,
  ) {
    this.policy = callPolicy(options);
  }

  private readonly policy: ReturnType<typeof callPolicy>;

  async call(operation: string, body: unknown, call: RemoteCallOptions): Promise<RemoteOutcome> {
    const now = this.options.now ?? (() => new Date());
    let calls = 0;
    let injected = 0;
    // The failure of the last call made: what to report when the breaker then refused the next try.
    let lastFailure: unknown;
    const url = `${this.baseUrl.replace(/\/$/, "")}/${operation}`;
    try {
      const response = await this.policy.execute(async ({ signal }) => {
        const remaining = call.deadline.getTime() - now().getTime();
        if (remaining <= 0) throw new DeadlinePassedError("deadline passed before the call");
        const admission = await this.options.breaker.admit(call.orderId, call.log);
        if (!admission.allowed) throw new ServiceUnavailableError(admission.until);
        calls++;
        const attempt = calls;
        // The attempt's timeout ends the call, or the deadline when it is nearer (only then a timer of its own).
        const cut =
          remaining < this.options.attemptTimeoutMs
            ? abortAfter(
                signal,
                remaining,
                () => new DOMException("the step's deadline was reached", "TimeoutError"),
              )
            : undefined;
        const attemptSignal = cut?.signal ?? signal;
        // One client span per call made, its context sent on as the traceparent header.
        return inSpan(
          `POST ${operation}`,
          {
            kind: SpanKind.CLIENT,
            from: call.log,
            attributes: {
              "http.request.method": "POST",
              "url.full": url,
              ...(this.options.service ? { "peer.service": this.options.service } : {}),
              "sas.order_id": call.orderId,
              "sas.attempt": attempt,
            },
          },
          async (span) => {
            try {
              const chaos = this.options.chaos;
              const draw = chaos?.next();
              if (chaos && draw) {
                injected++;
                span.setAttribute("sas.chaos", draw.fault ? "fault" : "latency");
                await chaos.inject(draw, {
                  operation,
                  idempotencyKey: call.idempotencyKey,
                  attempt,
                  signal: attemptSignal,
                  log: call.log,
                });
              }
              const res = await fetch(url, {
                method: "POST",
                headers: {
                  "content-type": "application/json",
                  "idempotency-key": call.idempotencyKey,
                  ...traceHeaders(span),
                },
                body: JSON.stringify(body),
                signal: attemptSignal,
              });
              const text = await res.text();
              span.setAttribute("http.response.status_code", res.status);
              let parsed: unknown = text;
              try {
                parsed = text ? JSON.parse(text) : null;
              } catch {
                // A non-JSON body is kept as text for the error message.
              }
              if (isTransientStatus(res.status)) throw new TransientHttpError(res.status, parsed);
              // A 4xx is the service's answer (a refusal), not a failed call: the breaker counts it as a success, and
              // the span still shows it as an error.
              if (res.status >= 400) failed(span, new Error(`HTTP ${res.status}`));
              await this.options.breaker.onSuccess(call.orderId, call.log);
              return { status: res.status, body: parsed };
            } catch (error) {
              // Timeouts, network errors and injected faults count like 5xx: the breaker cannot tell them from an
              // outage (and chaos is there to make it believe one).
              lastFailure = error;
              await this.options.breaker.onFailure(call.orderId, call.log);
              throw error;
            } finally {
              cut?.done();
            }
          },
        );
      });
      if (response.status >= 200 && response.status < 300) {
        return { outcome: "ok", status: response.status, body: response.body, calls, injected };
      }
      return {
        outcome: "permanent",
        status: response.status,
        error: errorBody(response.body, `HTTP${response.status}`),
        calls,
        injected,
      };
    } catch (error) {
      const refused = error instanceof ServiceUnavailableError;
      return {
        outcome: "transient",
        // Calls were made and failed before the breaker opened: their failure is the news, not the refusal.
        error: describeTransient(refused && lastFailure !== undefined ? lastFailure : error),
        calls,
        injected,
        ...(refused ? { unavailableUntil: error.until } : {}),
      };
    }
  }
}

function describeTransient(error: unknown): { code: string; message: string } {
  if (error instanceof TransientHttpError) return errorBody(error.body, `HTTP${error.status}`);
  if (error instanceof ServiceUnavailableError) return { code: "CircuitOpen", message: error.message };
  if (error instanceof DeadlinePassedError) return { code: "DeadlinePassed", message: error.message };
  if (error instanceof InjectedFaultError) return { code: error.code, message: error.message };
  if (error instanceof TaskCancelledError) return { code: "Timeout", message: "attempt timed out" };
  const e = error as { name?: string; message?: string; cause?: { code?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return { code: "Timeout", message: "deadline reached" };
  return { code: e?.cause?.code ?? "NetworkError", message: e?.message ?? String(error) };
}
