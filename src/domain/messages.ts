import { z } from "zod";
import { orderSchema } from "./order";
import { processStateSchema } from "./stateRecord";
import { isoTimestamp } from "./validation";

/** The `orders` queue carries exactly the order submission. */
export const orderSubmissionSchema = orderSchema;

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

export const agentRequestSchema = z.strictObject({
  requestId: z.string().min(1),
  orderId: z.string().min(1),
  instanceId: z.string().min(1),
  stepIndex: z.number().int().nonnegative(),
  step: z.string().min(1),
  kind: stepKindSchema,
  payload: z.record(z.string(), z.unknown()),
  completeBy: isoTimestamp,
  idempotencyKey: z.string().min(1),
});
export type AgentRequest = z.infer<typeof agentRequestSchema>;

export const agentOutcomeSchema = z.enum(["ok", "transient", "permanent"]);
export type AgentOutcome = z.infer<typeof agentOutcomeSchema>;

export const agentErrorSchema = z.strictObject({ code: z.string().min(1), message: z.string() });

export const agentReplySchema = z
  .strictObject({
    requestId: z.string().min(1),
    orderId: z.string().min(1),
    instanceId: z.string().min(1),
    stepIndex: z.number().int().nonnegative(),
    kind: stepKindSchema,
    outcome: agentOutcomeSchema,
    result: z.unknown().optional(),
    compensation: z.unknown().optional(),
    error: agentErrorSchema.optional(),
  })
  .refine((reply) => reply.outcome === "ok" || reply.error !== undefined, {
    error: "a transient or permanent reply must carry error {code, message}",
    path: ["error"],
  });
export type AgentReply = z.infer<typeof agentReplySchema>;

/** External event name an orchestration waits on for one step's reply. */
export function replyEventName(stepIndex: number, kind: StepKind): string {
  return `reply:${stepIndex}:${kind}`;
}

export const ALERT_KINDS = [
  "Error",
  "CompensationFailed",
  "InvalidOrder",
  "OrderConflict",
  "InvalidMessage",
  "UnknownWorkflow",
] as const;
export const alertSchema = z.strictObject({
  kind: z.enum(ALERT_KINDS),
  orderId: z.string().nullable(),
  processState: processStateSchema.nullable(),
  reason: z.string(),
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
  detail: z.string().nullable(),
});
export type StatusMessage = z.infer<typeof statusMessageSchema>;

/** replyTo must name a private status queue under STATUS_QUEUE_PREFIX; anything else could be any queue at all. */
export function isAllowedReplyTo(replyTo: string, statusQueuePrefix: string): boolean {
  return replyTo.startsWith(statusQueuePrefix) && replyTo.length > statusQueuePrefix.length;
}
