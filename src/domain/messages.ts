import { z } from "zod";
import { processStateSchema } from "./stateRecord";
import {
  agentRequestId,
  idempotencyKeyFor,
  instanceIdSchema,
  orderIdSchema,
  parseInstanceId,
  STEP_NAME_PATTERN,
  stepKindSchema,
} from "./ids";
import { escapedLine, isoTimestamp, MAX_REASON_LENGTH, quoteValue } from "./validation";
import { SERVICE_ALERT_KINDS } from "./breaker";
import { agentNameSchema } from "./workflow";

/**
 * The queues the app sends to besides the agent request queues (agentRequestQueue) and the status queues
 * (STATUS_QUEUES): names of the contract (docs/contract.md#queues), which the roles name as they send.
 */
export const QUEUES = {
  orders: "orders",
  agentReplies: "agent-replies",
  alerts: "alerts",
  rejected: "rejected-messages",
  /** The Supervisor's recovery queue: one notice per step that passed its deadline unanswered. */
  deadlines: "deadlines",
} as const;

/** Largest agent result (JSON) a reply may carry: it is stored in the state record, which must stay small. */
export const MAX_RESULT_BYTES = 16_384;
/** Longest error message a reply may carry; an agent shortens a remote service's message to fit. */
export const MAX_ERROR_MESSAGE_LENGTH = 1_024;
/** Longest error code a reply may carry; an agent shortens a remote service's code to fit. */
export const MAX_ERROR_CODE_LENGTH = 64;

const stepIndexSchema = z.number().int().nonnegative().max(63);
const stepNameSchema = z.string().regex(STEP_NAME_PATTERN, {
  error: (issue) => `expected a step name (letters, digits, '-', '_'), got ${quoteValue(issue.input)}`,
});

/** The parts of a request or reply that name it: which order, which attempt, which step and direction. */
interface Addressed {
  requestId: string;
  orderId: string;
  instanceId: string;
  stepIndex: number;
  kind: "do" | "undo";
}

/**
 * Why the ids of a request or reply do not fit together, or undefined when they do: the instance id must be an
 * attempt of the message's own order, and the requestId the one the Scheduler derives from attempt, step and
 * direction. A message that fails this was not written by this app.
 */
export function addressProblem(message: Addressed): string | undefined {
  const attempt = parseInstanceId(message.instanceId);
  if (attempt && attempt.orderId !== message.orderId) {
    return `instanceId: ${quoteValue(message.instanceId)} is an attempt of order ${quoteValue(attempt.orderId)}, not of ${quoteValue(message.orderId)}`;
  }
  const expected = agentRequestId(message.instanceId, message.stepIndex, message.kind);
  if (message.requestId !== expected) {
    return `requestId: expected ${quoteValue(expected)} for step ${message.stepIndex} ${message.kind} of ${message.instanceId}, got ${quoteValue(message.requestId)}`;
  }
  return undefined;
}

const addressed = <T extends Addressed>(schema: z.ZodType<T>) =>
  schema.superRefine((message, ctx) => {
    const problem = addressProblem(message);
    if (problem) ctx.addIssue({ code: "custom", message: problem, input: message });
  });

export const agentRequestSchema = addressed(
  z.strictObject({
    requestId: z.string().min(1),
    orderId: orderIdSchema,
    instanceId: instanceIdSchema,
    stepIndex: stepIndexSchema,
    step: stepNameSchema,
    kind: stepKindSchema,
    payload: z.record(z.string(), z.unknown()),
    completeBy: isoTimestamp,
    idempotencyKey: z.string().min(1),
  }),
).superRefine((request, ctx) => {
  const expected = idempotencyKeyFor(request.orderId, request.step, request.kind);
  if (request.idempotencyKey !== expected) {
    ctx.addIssue({
      code: "custom",
      path: ["idempotencyKey"],
      message: `expected ${quoteValue(expected)}, got ${quoteValue(request.idempotencyKey)}`,
      input: request.idempotencyKey,
    });
  }
});
export type AgentRequest = z.infer<typeof agentRequestSchema>;

/**
 * The Supervisor's recovery queue (`deadlines`): an attempt's step passed its completeBy with no answer. The
 * Scheduler's durable timer for the step fires at that time anyway, and its orchestration sends this notice
 * instead of only ending, so the Supervisor acts on exactly that record with a point read, at the deadline,
 * rather than finding it in its next sweep.
 */
export const deadlineMessageSchema = z
  .strictObject({
    orderId: orderIdSchema,
    /** The attempt (its lockedBy) whose step passed its deadline: the Supervisor's write is fenced by it. */
    instanceId: instanceIdSchema,
    stepIndex: stepIndexSchema,
    kind: stepKindSchema,
    completeBy: isoTimestamp,
  })
  .superRefine((message, ctx) => {
    const attempt = parseInstanceId(message.instanceId);
    if (attempt && attempt.orderId !== message.orderId)
      ctx.addIssue({
        code: "custom",
        path: ["instanceId"],
        message: `${quoteValue(message.instanceId)} is an attempt of order ${quoteValue(attempt.orderId)}, not of ${quoteValue(message.orderId)}`,
      });
  });
export type DeadlineMessage = z.infer<typeof deadlineMessageSchema>;

export const agentOutcomeSchema = z.enum(["ok", "transient", "permanent"]);
export type AgentOutcome = z.infer<typeof agentOutcomeSchema>;

export const agentErrorSchema = z.strictObject({
  code: z.string().min(1).max(MAX_ERROR_CODE_LENGTH),
  message: z.string().max(MAX_ERROR_MESSAGE_LENGTH),
});

/** Size of a value as JSON, in bytes; Infinity for what JSON cannot hold. */
export function jsonBytes(value: unknown): number {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 0 : Buffer.byteLength(text);
  } catch {
    return Infinity;
  }
}

export const agentReplySchema = addressed(
  z
    .strictObject({
      requestId: z.string().min(1),
      orderId: orderIdSchema,
      instanceId: instanceIdSchema,
      stepIndex: stepIndexSchema,
      kind: stepKindSchema,
      outcome: agentOutcomeSchema,
      result: z
        .unknown()
        .refine((r) => jsonBytes(r) <= MAX_RESULT_BYTES, {
          error: `expected at most ${MAX_RESULT_BYTES} bytes of JSON`,
        })
        .optional(),
      error: agentErrorSchema.optional(),
      /**
       * Only on a transient reply for which the agent made no call at all, the service's shared circuit breaker
       * being open: until when it refuses calls. The Scheduler then parks the order instead of counting a failure.
       */
      unavailableUntil: isoTimestamp.optional(),
    })
    .refine((reply) => reply.outcome === "ok" || reply.error !== undefined, {
      error: "a transient or permanent reply must carry error {code, message}",
      path: ["error"],
    })
    .refine((reply) => reply.unavailableUntil === undefined || reply.outcome === "transient", {
      error: "only a transient reply may say until when the service is unavailable",
      path: ["unavailableUntil"],
    }),
);
export type AgentReply = z.infer<typeof agentReplySchema>;

export const ALERT_KINDS = [
  "Error",
  "CompensationFailed",
  "InvalidOrder",
  "OrderConflict",
  "InvalidMessage",
  "UnknownWorkflow",
  ...SERVICE_ALERT_KINDS,
  /** The app's own store or bus kept failing for INFRA_FAULTS.alertAfterSeconds (orderId is null then). */
  "InfrastructureUnavailable",
  /** A remote service answered a step's call with something that is not its answer (src/remote/answers.ts). */
  "InvalidAnswer",
  /** A remote service's route is not where its URL setting says: 404, 405 or a redirect (orderId is null then). */
  "ServiceMisconfigured",
] as const;
export const alertSchema = z.strictObject({
  kind: z.enum(ALERT_KINDS),
  /**
   * The remote service a ServiceUnavailable, ServiceRecovered, ServiceMisconfigured (orderId null for these) or
   * InvalidAnswer alert is about.
   */
  service: agentNameSchema.optional(),
  orderId: z.string().nullable(),
  processState: processStateSchema.nullable(),
  reason: escapedLine(MAX_REASON_LENGTH),
  at: isoTimestamp,
});
export type Alert = z.infer<typeof alertSchema>;

export const STATUS_VALUES = [
  "received",
  "processing",
  "stepSucceeded",
  "processed",
  "compensating",
  "compensated",
  "compensationFailed",
  "failed",
] as const;
export const statusMessageSchema = z.strictObject({
  orderId: z.string().min(1),
  status: z.enum(STATUS_VALUES),
  processState: processStateSchema,
  at: isoTimestamp,
  /** What the trail knows: a step's name, an error's code and message; escaped, one line, bounded. */
  detail: escapedLine(MAX_REASON_LENGTH).nullable(),
});
export type StatusMessage = z.infer<typeof statusMessageSchema>;

/** A status queue name lies under STATUS_QUEUE_PREFIX; anything else could be any queue at all. */
export function isAllowedReplyTo(replyTo: string, statusQueuePrefix: string): boolean {
  return replyTo.startsWith(statusQueuePrefix) && replyTo.length > statusQueuePrefix.length;
}

/**
 * Why a replyTo cannot be used, or undefined: it must be one of the status queues that exist (STATUS_QUEUES),
 * not merely a name with the right prefix, so that no submission makes the app open a sender for a queue of its
 * choosing.
 */
export function replyToProblem(
  replyTo: string,
  settings: { statusQueuePrefix: string; statusQueues: readonly string[] },
): string | undefined {
  if (settings.statusQueues.includes(replyTo)) return undefined;
  const known = settings.statusQueues.length > 0 ? settings.statusQueues.join(", ") : "(none configured)";
  return isAllowedReplyTo(replyTo, settings.statusQueuePrefix)
    ? `replyTo: expected one of the status queues ${known}, got ${quoteValue(replyTo)}`
    : `replyTo: expected a status queue named ${settings.statusQueuePrefix}<name> (one of ${known}), got ${quoteValue(replyTo)}`;
}
