import { z } from "zod";
import { quoteValue } from "./validation";

/**
 * The identifiers that travel between the roles, and the one grammar each must follow. Every id from a request or
 * a message is checked against these before it reaches a store call or a URL: the durable client, for one, puts
 * instance ids into its HTTP paths as they are, so `X:1/terminate?reason=x` would become a different call. The
 * alphabets below are URL-safe path segments, which is why no encoding is needed after validation.
 */

/** An orderId: 1-64 letters, digits, '-' or '_', starting with a letter or digit. It is also a Cosmos id. */
export const ORDER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const ORDER_ID_RULE = "1-64 letters, digits, '-' or '_', starting with a letter or digit";

/** A workflow step name; part of idempotency keys and of the Idempotency-Key header. */
export const STEP_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Attempt numbers start at 1 (attempt 0 is "never claimed"); nine digits is more than any order will need. */
const ATTEMPT_PATTERN = "[1-9][0-9]{0,8}";
const INSTANCE_ID_PATTERN = new RegExp(`^(${ORDER_ID_PATTERN.source.slice(1, -1)}):(${ATTEMPT_PATTERN})$`);

export const orderIdSchema = z.string().regex(ORDER_ID_PATTERN, {
  error: (issue) => `expected ${ORDER_ID_RULE}, got ${quoteValue(issue.input)}`,
});

/** Orchestration instance id of an attempt; it is also the record's `lockedBy` while that attempt holds it. */
export function instanceIdFor(orderId: string, attempt: number): string {
  return `${orderId}:${attempt}`;
}

/** The order and attempt an instance id names, or undefined when it is not one the starter creates. */
export function parseInstanceId(instanceId: string): { orderId: string; attempt: number } | undefined {
  const match = INSTANCE_ID_PATTERN.exec(instanceId);
  return match ? { orderId: match[1]!, attempt: Number(match[2]) } : undefined;
}

export const instanceIdSchema = z.string().refine((value) => parseInstanceId(value) !== undefined, {
  error: (issue) => `expected an attempt id <orderId>:<attempt>, got ${quoteValue(issue.input)}`,
});

export const stepKindSchema = z.enum(["do", "undo"]);
export type StepKind = z.infer<typeof stepKindSchema>;

/** MessageId of an agent request, stable per attempt, step and direction, so duplicate detection drops resends. */
export function agentRequestId(instanceId: string, stepIndex: number, kind: StepKind): string {
  return `${instanceId}:${stepIndex}:${kind}`;
}

/**
 * Idempotency key sent to the remote service. Stable across attempts (no instance id in it): a retry after a
 * lost reply returns the first effect instead of applying a second.
 */
export function idempotencyKeyFor(orderId: string, step: string, kind: StepKind): string {
  return `${orderId}:${step}:${kind}`;
}

/**
 * MessageId of the deadline notice of one step of one attempt: whatever sends it (the deadline activity, or the
 * reply router recording a transient failure) may run twice, and the `deadlines` queue's duplicate detection keeps
 * one.
 */
export function deadlineMessageId(instanceId: string, stepIndex: number, kind: StepKind): string {
  return `deadline:${instanceId}:${stepIndex}:${kind}`;
}

/**
 * MessageId of the InvalidAnswer alert of one step and direction of an order: the alerts queue's duplicate detection
 * keeps one per step however many attempts, deliveries and calls meet the same answer within its window.
 */
export function answerAlertId(orderId: string, stepIndex: number, kind: StepKind): string {
  return `answer:${orderId}:${stepIndex}:${kind}`;
}

/**
 * MessageId of a service's ServiceMisconfigured alert: one for the service, whichever order and operation met it
 * first, per window of the alerts queue's duplicate detection, however many orders meet it meanwhile.
 */
export function misconfiguredAlertId(service: string): string {
  return `misconfigured:${service}`;
}

/**
 * External event the reply path raises on an attempt's orchestration once an answer has ended the attempt's run of
 * dispatches: the order finished, or the attempt stopped or was fenced. An answer that led to the next dispatch
 * raises nothing: the orchestration's timer stands for that step too (src/scheduler/orchestration.ts).
 */
export const ATTEMPT_ENDED_EVENT = "attemptEnded";

/**
 * External event name of one step's answer, which builds before ATTEMPT_ENDED_EVENT raised for every answer: an
 * orchestration still takes it, so that the histories of attempts those builds started replay.
 */
export function replyEventName(stepIndex: number, kind: StepKind): string {
  return `reply:${stepIndex}:${kind}`;
}
