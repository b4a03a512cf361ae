import {
  ExponentialBackoff,
  TaskCancelledError,
  TimeoutStrategy,
  handleWhen,
  retry,
  timeout,
  wrap,
  type IBackoff,
  type IBackoffFactory,
  type IRetryBackoffContext,
} from "cockatiel";
import { AGENT_BACKOFF } from "../domain";
import { abortAfter } from "../resilience/abortAfter";
import type { CallAdmission } from "./sharedBreaker";
import { InjectedFaultError, type ChaosInjector } from "./chaosInjector";
import { AnswerTooLargeError, dropBody, readBoundedBody } from "./answerBody";
import {
  classifyAnswer,
  MAX_ANSWER_BYTES,
  shownUrl,
  type AnswerClass,
  type AnswerProblem,
  type SuccessCheck,
} from "./answers";
import type { Logger } from "../telemetry/logger";
import { failed, inSpan, SpanKind, traceHeaders } from "../telemetry/tracing";

/**
 * `calls`: the attempts that started, each admitted by the circuit breaker (an attempt chaos failed counts: the
 * breaker, the retries and the retry budget see it as a call). `injected`: those of them chaos delayed or failed
 * on purpose (CHAOS_*); 0 while chaos is off. `problems`: what the calls' answers showed an operator should hear
 * of (an answer that is not the service's, a URL that is not the service's), the first of each kind; absent when
 * none did.
 */
export type RemoteOutcome = (
  | { outcome: "ok"; status: number; body: Record<string, unknown> }
  | { outcome: "permanent"; status: number; error: { code: string; message: string } }
  | {
      outcome: "transient";
      error: { code: string; message: string };
      /** Set when the service's circuit breaker refused the last call: until when it refuses calls. */
      unavailableUntil?: Date;
    }
) & { calls: number; injected: number; problems?: AnswerProblem[] };

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
  /** First retry delay; later ones grow exponentially with decorrelated jitter. A 429's Retry-After replaces it. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  breaker: CallGate;
  /**
   * Chaos for this service (CHAOS_*, staging only): run inside each attempt, before the real call, so the
   * attempt's timeout, the retries, the deadline and the breaker meet it as they would a slow or failing call.
   * Absent while chaos is off.
   */
  chaos?: ChaosInjector;
  /** What a 2xx must be to be the operation's success; default today's protocol (jsonObjectAnswer). */
  success?: SuccessCheck;
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

/** An answer that is not a success nor a refusal: the retry layer retries it, unless `final`. */
class AnswerError extends Error {
  constructor(
    readonly verdict: Extract<AnswerClass, { kind: "transient" | "misconfigured" }>,
    /** A 429 whose Retry-After is past the step's deadline: no call could start in time. */
    readonly final = false,
  ) {
    super(verdict.error.message);
  }
}

/** The deadline passed before the next call could start: stop without calling. */
class DeadlinePassedError extends Error {}

/** The service's circuit breaker is open: no call was made. */
class ServiceUnavailableError extends Error {
  constructor(readonly until: Date) {
    super(`circuit breaker open until ${until.toISOString()}`);
  }
}

type RetryContext = IRetryBackoffContext<unknown>;

/**
 * `backoff`, except after an answer that named its Retry-After: then the next call waits that long. The attempt has
 * already checked that the wait ends before the deadline (a later one is final: not retried).
 */
function honouringRetryAfter(backoff: IBackoffFactory<RetryContext>): IBackoffFactory<RetryContext> {
  const chain = (next: (context: RetryContext) => IBackoff<RetryContext>): IBackoffFactory<RetryContext> => ({
    next(context) {
      const planned = next(context);
      const error = "error" in context.result ? context.result.error : undefined;
      const asked =
        error instanceof AnswerError && error.verdict.kind === "transient"
          ? error.verdict.retryAfterMs
          : undefined;
      return { duration: asked ?? planned.duration, ...chain((c) => planned.next(c)) };
    },
  });
  return chain((context) => backoff.next(context));
}

/**
 * The retries with back-off and the timeout of each attempt of a client's calls. Made once per client: cockatiel
 * keeps each execution's retries, back-off and timer apart, so calls can share it.
 */
function callPolicy(options: RemoteServiceOptions) {
  return wrap(
    retry(
      handleWhen(
        (e) =>
          !(e instanceof ServiceUnavailableError) &&
          !(e instanceof DeadlinePassedError) &&
          !(e instanceof AnswerError && e.final),
      ),
      {
        maxAttempts: options.maxAttempts - 1,
        backoff: honouringRetryAfter(
          new ExponentialBackoff({
            initialDelay: options.initialBackoffMs ?? AGENT_BACKOFF.initialMs,
            maxDelay: options.maxBackoffMs ?? AGENT_BACKOFF.maxMs,
          }),
        ),
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
 * breaker asked before each call, a timeout per attempt, and chaos when staging asks for it. One HTTP request per
 * call: redirects are not followed, and an answer is read up to MAX_ANSWER_BYTES, the connection dropped beyond.
 * What an answer means is src/remote/answers.ts's to say: a success ok, a business refusal permanent; a 5xx, 408,
 * 429 (after its Retry-After), an answer that is not the service's, a redirect, a missing route, timeouts, network
 * errors, injected faults and an open circuit transient.
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
    const problems = new Map<AnswerProblem["kind"], AnswerProblem>();
    const seen = () => (problems.size > 0 ? { problems: [...problems.values()] } : {});
    const url = `${this.baseUrl.replace(/\/$/, "")}/${operation}`;
    try {
      const answered = await this.policy.execute(async ({ signal }) => {
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
            let verdict: AnswerClass;
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
                // A redirect is an answer of its own (answers.ts): following it would send the order and its key
                // to a host no setting names, and make requests the retry budget does not count.
                redirect: "manual",
                signal: attemptSignal,
              });
              span.setAttribute("http.response.status_code", res.status);
              const redirected = res.status >= 300 && res.status < 400;
              if (redirected) await dropBody(res);
              const read = redirected ? new Uint8Array(0) : await readBoundedBody(res, MAX_ANSWER_BYTES);
              verdict = classifyAnswer(
                { status: res.status, header: (name) => res.headers.get(name), body: read },
                { url, orderId: call.orderId, now: now() },
                this.options.success,
              );
            } catch (error) {
              if (error instanceof AnswerTooLargeError && !problems.has("InvalidAnswer"))
                problems.set("InvalidAnswer", {
                  kind: "InvalidAnswer",
                  detail: `POST ${shownUrl(url)}: ${error.message}`,
                });
              // Timeouts, network errors, answers too large and injected faults count like 5xx: the breaker
              // cannot tell them from an outage (and chaos is there to make it believe one).
              lastFailure = error;
              await this.options.breaker.onFailure(call.orderId, call.log);
              throw error;
            } finally {
              cut?.done();
            }
            if (verdict.kind !== "ok" && verdict.kind !== "refused" && verdict.problem)
              problems.set(verdict.problem.kind, problems.get(verdict.problem.kind) ?? verdict.problem);
            // A refusal and a 429 are the service answering, not failed calls: the breaker counts them as
            // successes, and the span still shows them as errors.
            const up =
              verdict.kind === "ok" ||
              verdict.kind === "refused" ||
              (verdict.kind === "transient" && !verdict.outage);
            if (verdict.kind === "refused") failed(span, new Error(`HTTP ${verdict.status}`));
            if (up) await this.options.breaker.onSuccess(call.orderId, call.log);
            else await this.options.breaker.onFailure(call.orderId, call.log);
            if (verdict.kind === "ok" || verdict.kind === "refused") return verdict;
            const wait = verdict.kind === "transient" ? verdict.retryAfterMs : undefined;
            const failure = new AnswerError(
              verdict,
              wait !== undefined && now().getTime() + wait >= call.deadline.getTime(),
            );
            lastFailure = failure;
            throw failure;
          },
        );
      });
      if (answered.kind === "ok")
        return { outcome: "ok", status: answered.status, body: answered.body, calls, injected, ...seen() };
      return {
        outcome: "permanent",
        status: answered.status,
        error: answered.error,
        calls,
        injected,
        ...seen(),
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
        ...seen(),
      };
    }
  }
}

function describeTransient(error: unknown): { code: string; message: string } {
  if (error instanceof AnswerError) {
    if (!error.final) return error.verdict.error;
    const { code, message } = error.verdict.error;
    return { code, message: `${message} (Retry-After past the step's deadline: not retried)` };
  }
  if (error instanceof AnswerTooLargeError) return { code: error.code, message: error.message };
  if (error instanceof ServiceUnavailableError) return { code: "CircuitOpen", message: error.message };
  if (error instanceof DeadlinePassedError) return { code: "DeadlinePassed", message: error.message };
  if (error instanceof InjectedFaultError) return { code: error.code, message: error.message };
  if (error instanceof TaskCancelledError) return { code: "Timeout", message: "attempt timed out" };
  const e = error as { name?: string; message?: string; cause?: { code?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return { code: "Timeout", message: "deadline reached" };
  return { code: e?.cause?.code ?? "NetworkError", message: e?.message ?? String(error) };
}
