// Request bodies of the simulator's routes. Service bodies tolerate extra fields (the app may send more
// than a service reads); the fault spec is strict so a misspelt option is refused instead of ignored.
import { z } from "zod";

const orderId = z.string().trim().min(1).max(200);
const optionalId = z.string().trim().min(1).max(200).optional();

export const reserveBody = z.object({
  orderId,
  items: z
    .array(z.object({ sku: z.string().trim().min(1).max(200), quantity: z.number().int().positive() }))
    .min(1),
});

// An undo may not know the id of its do (the reply was lost): without one it undoes every active do of the order.
export const releaseBody = z.object({ orderId, reservationId: optionalId });

export const chargeBody = z.object({
  orderId,
  amount: z.number().positive().finite(),
  currency: z.string().regex(/^[A-Z]{3}$/, "expected an ISO 4217 code such as EUR"),
});

export const refundBody = z.object({ orderId, chargeId: optionalId });

export const bookBody = z.object({
  orderId,
  address: z.object({
    line1: z.string().trim().min(1),
    city: z.string().trim().min(1),
    postalCode: z.string().trim().min(1),
    country: z.string().regex(/^[A-Z]{2}$/, "expected an ISO 3166 alpha-2 code such as DE"),
  }),
});

export const cancelBody = z.object({ orderId, trackingNumber: optionalId });

export const SERVICES = ["inventory", "payment", "shipping"] as const;
export type Service = (typeof SERVICES)[number];

/** The do and undo operation of each service, as they appear in the route /<service>/<operation>. */
export const OPERATIONS = {
  inventory: { do: "reserve", undo: "release" },
  payment: { do: "charge", undo: "refund" },
  shipping: { do: "book", undo: "cancel" },
} as const satisfies Record<Service, { do: string; undo: string }>;

export const FAULT_KINDS = ["transient", "permanent", "latency", "hang", "drop-response"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const faultSpec = z
  .strictObject({
    service: z.enum(SERVICES),
    operation: z.string().min(1).optional(),
    orderId: orderId.optional(),
    kind: z.enum(FAULT_KINDS),
    count: z.number().int().positive().optional(),
    probability: z.number().min(0).max(1).optional(),
    latencyMs: z.number().int().min(0).max(600_000).optional(),
    status: z.number().int().optional(),
  })
  .superRefine((f, ctx) => {
    const ops: readonly string[] = Object.values(OPERATIONS[f.service]);
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
    if (f.status !== undefined) {
      if (f.kind === "transient" && (f.status < 500 || f.status > 599)) {
        ctx.addIssue({ code: "custom", path: ["status"], message: "expected 500-599 for a transient fault" });
      } else if (f.kind === "permanent" && (f.status < 400 || f.status > 499)) {
        ctx.addIssue({ code: "custom", path: ["status"], message: "expected 400-499 for a permanent fault" });
      } else if (f.kind !== "transient" && f.kind !== "permanent") {
        ctx.addIssue({
          code: "custom",
          path: ["status"],
          message: "only applies to kinds transient and permanent",
        });
      }
    }
  });
export type FaultSpec = z.infer<typeof faultSpec>;

/** "items.0.quantity: Invalid input: expected number, received string; orderId: ..." */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "body"}: ${i.message}`).join("; ");
}
