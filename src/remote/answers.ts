/**
 * What a remote service's HTTP answer means for the step that called it: a success, a business refusal, a failure
 * worth retrying, or a route that is not where the URL setting says. Pure: the transport (remoteService.ts) reads
 * the answer, bounded, and acts on the verdict; an adapter of a service with a protocol of its own supplies its own
 * SuccessCheck. Every text taken from the answer is escaped and bounded before it goes into an error or an alert:
 * whatever answers the URL writes it.
 */
import { z } from "zod";
import {
  boundedText,
  describeNonObjectBody,
  MAX_ERROR_CODE_LENGTH,
  MAX_ERROR_MESSAGE_LENGTH,
  quoteValue,
} from "../domain";

/**
 * The most of an answer's body the client reads. Four times what a reply may keep (MAX_RESULT_BYTES), so that an
 * answer the agent can keep is always read whole; beyond it the call fails (AnswerTooLarge) and the connection is
 * dropped, so that a service cannot make the app hold more than this per call.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** An HTTP answer as the transport read it. */
export interface HttpAnswer {
  status: number;
  /** A response header by name, null when absent (fetch's `Headers.get`). */
  header(name: string): string | null;
  /** The body's bytes: at most MAX_ANSWER_BYTES, empty when there was none or it was not read (a redirect). */
  body: Uint8Array;
}

/** The call an answer is for. */
export interface AnswerCall {
  /** The URL called: `<service URL>/<operation>`. */
  url: string;
  /** The order the call was for: an answer that names another order is not this call's. */
  orderId: string;
  /** When the answer came (a Retry-After may be a date). */
  now: Date;
}

export interface RemoteError {
  code: string;
  message: string;
}

/** The alert an answer calls for: the service answered something that is not its answer, or is not where it is said to be. */
export type AnswerProblem = { kind: "InvalidAnswer" | "ServiceMisconfigured"; detail: string };

/** A success's body, or what is wrong with a 2xx that claims to be one. */
export type SuccessVerdict =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; code: "InvalidAnswer" | "AnswerMismatch"; problem: string };

/** Decides whether a 2xx answer is the operation's success. */
export type SuccessCheck = (answer: HttpAnswer, call: AnswerCall) => SuccessVerdict;

export type AnswerClass =
  | { kind: "ok"; status: number; body: Record<string, unknown> }
  /** A business refusal (a 4xx but 404, 405, 408 and 429): retrying cannot change it. */
  | { kind: "refused"; status: number; error: RemoteError }
  | {
      kind: "transient";
      status: number;
      error: RemoteError;
      /**
       * Whether it may be the service failing (a 5xx, a 408, an answer that is not its answer), which its circuit
       * breaker counts; false for a 429, which is the service answering that it is busy.
       */
      outage: boolean;
      /** A 429's or a 5xx's Retry-After, in ms from `call.now`: the next call waits that long. */
      retryAfterMs?: number;
      problem?: AnswerProblem;
    }
  /**
   * Not the service's answer but its URL's: a 404 or 405 (no such route), a redirect (the service is elsewhere).
   * No business refusal, so the order is not compensated for it: the step is retried as transient, and the
   * breaker counts it, as it cannot tell it from a service gone.
   */
  | { kind: "misconfigured"; status: number; error: RemoteError; problem: AnswerProblem };

/** The Retry-After an answer names, in ms from `now`: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: Date): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Each of the HTTP-date forms starts with the day's name; Date.parse alone reads "1.5" as a date of 2001.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** The URL without credentials or query, as an error or an alert may show it. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return boundedText(`${u.origin}${u.pathname}`, 200);
  } catch {
    return boundedText(url, 200);
  }
}

const mediaType = (answer: HttpAnswer): string | null =>
  answer.header("content-type")?.split(";")[0]!.trim().toLowerCase() || null;

const isJsonMediaType = (type: string | null): boolean =>
  type !== null && (type === "application/json" || /^application\/[^/]+\+json$/.test(type));

type Decoded = { ok: true; value: unknown } | { ok: false; problem: string };

/** The body as JSON: UTF-8 (a byte order mark ignored), parsed; undefined for an empty body. */
function decodeJson(body: Uint8Array): Decoded {
  if (body.byteLength === 0) return { ok: true, value: undefined };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return { ok: false, problem: `a body of ${body.byteLength} bytes that is not UTF-8` };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // The parser's message quotes the body.
    const why = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      problem: `a body of ${body.byteLength} bytes that is not JSON (${boundedText(why, 160)})`,
    };
  }
}

const answerObject = z.record(z.string(), z.unknown());

/**
 * The success of today's protocol (the simulator's, tools/simulator): a JSON object served as application/json.
 * An answer that names an order (`orderId`, which every operation of the simulator echoes) must name the call's.
 */
export const jsonObjectAnswer: SuccessCheck = (answer, call) => {
  const type = mediaType(answer);
  const head = `HTTP ${answer.status} with content-type ${type === null ? "(none)" : quoteValue(type, 60)}`;
  const invalid = (what: string): SuccessVerdict => ({
    ok: false,
    code: "InvalidAnswer",
    problem: `${head}: ${what}, not a JSON object`,
  });
  if (!isJsonMediaType(type)) return invalid(`${answer.body.byteLength} bytes of body`);
  const decoded = decodeJson(answer.body);
  if (!decoded.ok) return invalid(decoded.problem);
  const shape = describeNonObjectBody(decoded.value);
  const parsed = shape === undefined ? answerObject.safeParse(decoded.value) : undefined;
  if (!parsed?.success) return invalid(shape?.replace(/, expected a JSON object$/, "") ?? "a JSON value");
  const echoed = parsed.data.orderId;
  if (echoed !== undefined && echoed !== call.orderId) {
    return {
      ok: false,
      code: "AnswerMismatch",
      problem: `${head}: an answer for order ${quoteValue(echoed)}, not for ${quoteValue(call.orderId)}`,
    };
  }
  return { ok: true, body: parsed.data };
};

const errorFields = z.looseObject({ code: z.string().min(1).optional(), message: z.string().optional() });

/** What a failure or a refusal says of itself: its `{code, message}` when it has them, escaped and bounded. */
function errorOf(answer: HttpAnswer): RemoteError {
  const fallback = `HTTP${answer.status}`;
  const decoded = decodeJson(answer.body);
  const fields = decoded.ok ? errorFields.safeParse(decoded.value) : undefined;
  const said = fields?.success ? fields.data : {};
  return {
    code: boundedText(said.code ?? fallback, MAX_ERROR_CODE_LENGTH),
    message: boundedText(said.message ?? fallback, MAX_ERROR_MESSAGE_LENGTH),
  };
}

/** Where a redirect points, as far as an operator needs it: the Location's origin, escaped and bounded. */
function redirectTarget(answer: HttpAnswer, url: string): string {
  const location = answer.header("location");
  if (location === null) return "without a Location";
  try {
    const target = new URL(location, url).origin;
    const same = target === new URL(url).origin;
    return `to ${boundedText(target, 120)}${same ? " (the same origin)" : ""}`;
  } catch {
    return `to an unreadable Location ${quoteValue(location, 60)}`;
  }
}

/** Classifies an answer to `call`; `success` decides whether a 2xx is the operation's success. */
export function classifyAnswer(
  answer: HttpAnswer,
  call: AnswerCall,
  success: SuccessCheck = jsonObjectAnswer,
): AnswerClass {
  const { status } = answer;
  const where = `POST ${shownUrl(call.url)}`;
  if (status >= 200 && status < 300) {
    const verdict = success(answer, call);
    if (verdict.ok) return { kind: "ok", status, body: verdict.body };
    const message = boundedText(`${where}: ${verdict.problem}`, MAX_ERROR_MESSAGE_LENGTH);
    return {
      kind: "transient",
      status,
      error: { code: verdict.code, message },
      outage: true,
      problem: { kind: "InvalidAnswer", detail: message },
    };
  }
  if (status >= 300 && status < 400) {
    // Never followed: the body and the idempotency key would go to a host no setting names, and its answer would
    // be taken for the service's.
    const message = `${where} answered HTTP ${status}, a redirect ${redirectTarget(answer, call.url)}, not followed`;
    return {
      kind: "misconfigured",
      status,
      error: { code: "Redirected", message },
      problem: { kind: "ServiceMisconfigured", detail: message },
    };
  }
  if (status === 404 || status === 405) {
    const message = `${where} answered HTTP ${status}: the service has no such route there`;
    return {
      kind: "misconfigured",
      status,
      error: { code: status === 404 ? "RouteNotFound" : "MethodNotAllowed", message },
      problem: { kind: "ServiceMisconfigured", detail: message },
    };
  }
  if (status === 429) {
    const wait = retryAfterMs(answer.header("retry-after"), call.now);
    return {
      kind: "transient",
      status,
      error: errorOf(answer),
      outage: false,
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    };
  }
  if (status === 408 || (status >= 500 && status < 600)) {
    // A 503 may say when to come back (RFC 9110, 10.2.3): the next call waits that long, the breaker still counts it.
    const wait = retryAfterMs(answer.header("retry-after"), call.now);
    return {
      kind: "transient",
      status,
      error: errorOf(answer),
      outage: true,
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    };
  }
  if (status >= 400 && status < 500) return { kind: "refused", status, error: errorOf(answer) };
  const message = `${where} answered HTTP ${status}, a status this protocol does not define`;
  return {
    kind: "transient",
    status,
    error: { code: "InvalidAnswer", message },
    outage: true,
    problem: { kind: "InvalidAnswer", detail: message },
  };
}
