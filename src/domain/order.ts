import { createHash } from "node:crypto";
import { z } from "zod";

/** "required" when the field is missing, "expected <what>" when it has the wrong type. */
const expected = (what: string) => ({
  error: (issue: { code?: string; input?: unknown; keys?: string[] }) =>
    issue.code === "unrecognized_keys"
      ? `unknown field(s) ${(issue.keys ?? []).join(", ")}: expected only the fields of ${what}`
      : issue.input === undefined
        ? "required"
        : `expected ${what}`,
});

const money = z
  .number(expected("a number"))
  .finite()
  .nonnegative({ error: "expected an amount >= 0" })
  // Floating point: 9.99 * 100 is 998.9999999999999, so compare with a tolerance rather than exactly.
  .refine((n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6, {
    error: "expected at most two decimal places",
  });

export const orderItemSchema = z.strictObject(
  {
    sku: z.string(expected("a string")).min(1, { error: "expected a non-empty SKU" }).max(64),
    quantity: z
      .number(expected("a number"))
      .int({ error: "expected a whole number" })
      .positive({ error: "expected a quantity >= 1" })
      .max(10_000, { error: "expected a quantity <= 10000" }),
    unitPrice: money,
  },
  expected("an item {sku, quantity, unitPrice}"),
);

export const addressSchema = z.strictObject(
  {
    line1: z.string(expected("a string")).min(1, { error: "expected a non-empty line1" }).max(200),
    city: z.string(expected("a string")).min(1, { error: "expected a non-empty city" }).max(100),
    postalCode: z.string(expected("a string")).min(1, { error: "expected a non-empty postalCode" }).max(20),
    country: z.string(expected("a string")).regex(/^[A-Z]{2}$/, {
      error: "expected an ISO 3166-1 alpha-2 country code such as DE",
    }),
  },
  expected("an address object {line1, city, postalCode, country}"),
);

/**
 * An order submission (DESIGN §4). Unknown fields are refused rather than dropped: a field we do not store
 * would silently vanish, and the fingerprint would not protect it.
 */
export const orderSchema = z.strictObject(
  {
    orderId: z.string(expected("a string")).regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
      error: "expected 1-64 letters, digits, '-' or '_' (it becomes a Cosmos id and part of instance ids)",
    }),
    customerId: z.string(expected("a string")).min(1, { error: "expected a non-empty customerId" }).max(64),
    items: z
      .array(orderItemSchema, expected("an array of items"))
      .min(1, { error: "expected at least one item" })
      .max(100, { error: "expected at most 100 items" }),
    currency: z.string(expected("a string")).regex(/^[A-Z]{3}$/, {
      error: "expected an ISO 4217 currency code such as EUR",
    }),
    shippingAddress: addressSchema,
    replyTo: z
      .string(expected("a string"))
      .regex(/^[a-z0-9][a-z0-9._-]{0,259}$/, { error: "expected a Service Bus queue name" })
      .optional(),
  },
  expected("an order object"),
);

export type Order = z.infer<typeof orderSchema>;
export type OrderItem = z.infer<typeof orderItemSchema>;

/** The immutable business data of an order: everything but the routing field `replyTo`. */
export function immutableOrderData(order: Order): Omit<Order, "replyTo"> {
  const { replyTo: _replyTo, ...data } = order;
  return data;
}

/** JSON with object keys sorted, so that two equal orders serialise identically whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * SHA-256 of the canonical immutable data. A resubmission with the same orderId is accepted only when its
 * fingerprint matches the stored one: the same order twice is a no-op, different data is a conflict.
 */
export function orderFingerprint(order: Order): string {
  return (
    "sha256:" +
    createHash("sha256")
      .update(canonicalJson(immutableOrderData(order)))
      .digest("hex")
  );
}

export function orderTotal(order: Order): number {
  const cents = order.items.reduce((sum, item) => sum + Math.round(item.unitPrice * 100) * item.quantity, 0);
  return cents / 100;
}
