// Request bodies of the simulator's routes. Service bodies tolerate extra fields (the app may send more
// than a service reads); the fault spec is strict so a misspelt option is refused instead of ignored.
// The bodies a behaviour reads (items, amount...) are its own, in ./behaviours.ts.
import { z } from "zod";
import type { Role, ServedServices } from "./served";

export const orderId = z.string().trim().min(1).max(200);
const optionalId = z.string().trim().min(1).max(200).optional();

/**
 * The generic bodies: a do needs only the order; an undo may also name the effect to reverse by `idField`
 * (without it, the undo reverses every active effect of the order: it may not know the id, its reply lost).
 * Any other field is accepted and kept in the ledger.
 */
export function genericBody(role: Role, idField: string): z.ZodType<GenericBody> {
  const order = z.looseObject({ orderId });
  // Intersected rather than one shape: a computed key would widen the inferred shape and lose orderId.
  return role === "do" ? order : order.and(z.looseObject({ [idField]: optionalId }));
}
type GenericBody = { orderId: string } & Record<string, unknown>;

export const FAULT_KINDS = ["transient", "permanent", "latency", "hang", "drop-response", "answer"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const faultFields = {
  service: z.string(),
  operation: z.string().min(1).optional(),
  orderId: orderId.optional(),
  kind: z.enum(FAULT_KINDS),
  count: z.number().int().positive().optional(),
  probability: z.number().min(0).max(1).optional(),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  status: z.number().int().optional(),
  /** The error a transient or permanent fault answers with, as a service of its own might word it. */
  code: z.string().min(1).max(200).optional(),
  message: z.string().max(10_000).optional(),
  /**
   * What an `answer` fault sends in place of the service's answer, as a proxy, a gateway or a misrouted URL would:
   * its content-type ("" for none) and its body, as text.
   */
  contentType: z.string().max(200).optional(),
  body: z.string().max(1_000_000).optional(),
  /**
   * Decides a call before every fault without it, whatever their order: an outage answers every call, the calls of
   * an order that has its own faults too (those wait until it is over).
   */
  overrides: z.boolean().optional(),
};
export type FaultSpec = z.infer<z.ZodObject<typeof faultFields>>;

/** The fault spec of a simulator serving `services`: a fault names one of them, and one of its operations. */
export function faultSpecFor(services: ServedServices): z.ZodType<FaultSpec> {
  const names = Object.keys(services) as [string, ...string[]];
  return z.strictObject({ ...faultFields, service: z.enum(names) }).superRefine((f, ctx) => {
    const ops = Object.keys(services[f.service] ?? {});
    if (f.operation !== undefined && !ops.includes(f.operation)) {
      ctx.addIssue({
        code: "custom",
        path: ["operation"],
        message: `expected one of ${ops.join(", ")} for ${f.service}`,
      });
    }
    if (f.count !== undefined && f.probability !== undefined) {
      ctx.addIssue({ code: "custom", path: ["probability"], message: "give count or probability, not both" });
    }
    if (f.latencyMs !== undefined && f.kind !== "latency") {
      ctx.addIssue({ code: "custom", path: ["latencyMs"], message: "only applies to kind latency" });
    }
    for (const field of ["code", "message"] as const) {
      if (f[field] !== undefined && f.kind !== "transient" && f.kind !== "permanent") {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: "only applies to kinds transient and permanent",
        });
      }
    }
    for (const field of ["contentType", "body"] as const) {
      if (f[field] !== undefined && f.kind !== "answer") {
        ctx.addIssue({ code: "custom", path: [field], message: "only applies to kind answer" });
      }
    }
    if (f.status !== undefined) {
      if (f.kind === "answer" && (f.status < 200 || f.status > 599)) {
        ctx.addIssue({ code: "custom", path: ["status"], message: "expected 200-599 for an answer fault" });
      } else if (f.kind === "answer") {
        // Any status: the answer is the fault.
      } else if (f.kind === "transient" && (f.status < 500 || f.status > 599)) {
        ctx.addIssue({ code: "custom", path: ["status"], message: "expected 500-599 for a transient fault" });
      } else if (f.kind === "permanent" && (f.status < 400 || f.status > 499)) {
        ctx.addIssue({ code: "custom", path: ["status"], message: "expected 400-499 for a permanent fault" });
      } else if (f.kind !== "transient" && f.kind !== "permanent") {
        ctx.addIssue({
          code: "custom",
          path: ["status"],
          message: "only applies to kinds transient, permanent and answer",
        });
      }
    }
  });
}

/** "items.0.quantity: Invalid input: expected number, received string; orderId: ..." */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "body"}: ${i.message}`).join("; ");
}
