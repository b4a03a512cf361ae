import { createHash } from "node:crypto";
import countries from "i18n-iso-countries";
import { z } from "zod";
import { currencyMinorUnits, isActiveCurrency } from "./currencies";
import { ORDER_ID_PATTERN, ORDER_ID_RULE } from "./ids";
import { escapeText, isoTimestamp, quoteValue } from "./validation";

/** The first few unknown field names (the sender's text, so escaped), and how many more: a body may carry thousands. */
const namesOf = (keys: string[]): string => {
  const shown = keys.slice(0, 5).map((key) => {
    const k = escapeText(key);
    return k.length > 40 ? `${k.slice(0, 40)}...` : k;
  });
  return shown.join(", ") + (keys.length > shown.length ? ` and ${keys.length - shown.length} more` : "");
};

/** "required" when the field is missing, "expected <what>" when it has the wrong type. */
const expected = (what: string) => ({
  error: (issue: { code?: string; input?: unknown; keys?: string[] }) =>
    issue.code === "unrecognized_keys"
      ? `unknown field(s) ${namesOf(issue.keys ?? [])}: expected only the fields of ${what}`
      : issue.input === undefined
        ? "required"
        : `expected ${what}`,
});

/**
 * Bounds that keep every amount meaningful and every total exact: prices in cents stay far below 2^53, so a total
 * is always a finite number the payment service can charge. Above them an order is refused, not charged.
 */
export const ORDER_LIMITS = {
  /** Largest unit price, in the order's currency. */
  maxUnitPrice: 1_000_000,
  /** Largest quantity × unit price of one item. */
  maxLineTotal: 10_000_000,
  /** Largest total of an order. */
  maxOrderTotal: 10_000_000,
} as const;

/** Amounts are kept in cents: no price has more decimals, whatever its currency's minor unit (BHD has 3). */
const AMOUNT_DECIMALS = 2;
/** The smallest price: one cent. A currency without a minor unit (JPY) starts at 1, its decimals being 0. */
const MIN_AMOUNT = 0.01;

/**
 * Decimal places of a number as JSON would write it: String(n) is the shortest decimal that reads back as n, so
 * 9.99 has 2, 0.1 + 0.2 (0.30000000000000004) has 17, 1e-9 has 9 and 1.5e-7 has 8. Exact, where scaling by 100
 * and comparing with a tolerance would let 1e-9 pass as a whole number of cents.
 */
export function decimalPlaces(n: number): number {
  const [mantissa = "", exponent = "0"] = String(Math.abs(n)).split("e");
  const fraction = mantissa.split(".")[1] ?? "";
  return Math.max(0, fraction.length - Number(exponent));
}

/** A price an order can be charged: from MIN_AMOUNT to ORDER_LIMITS.maxUnitPrice, in whole cents. */
const isAmount = (n: number): boolean =>
  n >= MIN_AMOUNT && n <= ORDER_LIMITS.maxUnitPrice && decimalPlaces(n) <= AMOUNT_DECIMALS;

/** A price: at least a cent (a payment of 0 is refused, and less is not an amount), at most maxUnitPrice. */
const money = z
  .number(expected("a number"))
  .superRefine((n, ctx) => {
    if (!(n >= MIN_AMOUNT && n <= ORDER_LIMITS.maxUnitPrice)) {
      ctx.addIssue({
        code: "custom",
        message: `expected an amount from ${MIN_AMOUNT} to ${ORDER_LIMITS.maxUnitPrice}`,
        input: n,
      });
    } else if (decimalPlaces(n) > AMOUNT_DECIMALS) {
      ctx.addIssue({ code: "custom", message: "expected at most two decimal places", input: n });
    }
  })
  // What the refinement checks, for the JSON Schema of the API description (which cannot run it).
  .meta({
    minimum: MIN_AMOUNT,
    maximum: ORDER_LIMITS.maxUnitPrice,
    description: "At most two decimal places, and no more than the currency's minor unit",
  });

/** Minor units of a currency (JPY 0, EUR 2), capped at the two decimal places amounts are kept in. */
export function currencyDecimals(currency: string): number {
  return Math.min(currencyMinorUnits(currency) ?? AMOUNT_DECIMALS, AMOUNT_DECIMALS);
}

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
    // The officially assigned ISO 3166-1 codes (and XK), as i18n-iso-countries maintains them.
    country: z
      .string(expected("a string"))
      .refine((code) => /^[A-Z]{2}$/.test(code) && countries.isValid(code), {
        error: (issue) =>
          `expected an ISO 3166-1 alpha-2 country code such as DE, got ${quoteValue(issue.input, 8)}`,
      })
      .meta({ pattern: "^[A-Z]{2}$", description: "An officially assigned ISO 3166-1 alpha-2 code, or XK" }),
  },
  expected("an address object {line1, city, postalCode, country}"),
);

/**
 * An order submission (docs/contract.md#messages). Unknown fields are refused rather than dropped: a field we do not store
 * would silently vanish, and the fingerprint would not protect it.
 */
export const orderSchema = z
  .strictObject(
    {
      orderId: z.string(expected("a string")).regex(ORDER_ID_PATTERN, {
        error: `expected ${ORDER_ID_RULE} (it becomes a Cosmos id and part of instance ids)`,
      }),
      customerId: z.string(expected("a string")).min(1, { error: "expected a non-empty customerId" }).max(64),
      items: z
        .array(orderItemSchema, expected("an array of items"))
        .min(1, { error: "expected at least one item" })
        .max(100, { error: "expected at most 100 items" }),
      currency: z
        .string(expected("a string"))
        .refine(isActiveCurrency, {
          error: (issue) =>
            `expected an ISO 4217 code of a currency in use, such as EUR, got ${quoteValue(issue.input, 8)}`,
        })
        .meta({ pattern: "^[A-Z]{3}$", description: "An ISO 4217 code of a currency in use" }),
      shippingAddress: addressSchema,
      replyTo: z
        .string(expected("a string"))
        .regex(/^[a-z0-9][a-z0-9._-]{0,259}$/, { error: "expected a Service Bus queue name" })
        .optional(),
    },
    expected("an order object"),
  )
  .superRefine((order, ctx) => {
    // What only the whole order can tell: amounts in the currency's minor unit, and totals within bounds.
    // Zod runs this even when fields failed; totals of broken items would only repeat their errors.
    const items: unknown = order.items;
    const itemsValid =
      Array.isArray(items) &&
      order.items.every(
        (item) =>
          typeof item === "object" &&
          item !== null &&
          Number.isInteger(item.quantity) &&
          item.quantity >= 1 &&
          typeof item.unitPrice === "number" &&
          isAmount(item.unitPrice),
      );
    if (!isActiveCurrency(order.currency) || !itemsValid) return;
    const decimals = currencyDecimals(order.currency);
    let totalCents = 0;
    order.items.forEach((item, i) => {
      if (decimalPlaces(item.unitPrice) > decimals) {
        ctx.addIssue({
          code: "custom",
          path: ["items", i, "unitPrice"],
          message: `expected at most ${decimals} decimal places for ${order.currency}`,
          input: item.unitPrice,
        });
      }
      const lineCents = Math.round(item.unitPrice * 100) * item.quantity;
      if (lineCents > ORDER_LIMITS.maxLineTotal * 100) {
        ctx.addIssue({
          code: "custom",
          path: ["items", i],
          message: `expected quantity × unitPrice at most ${ORDER_LIMITS.maxLineTotal}, got ${lineCents / 100}`,
          input: item,
        });
      }
      totalCents += lineCents;
    });
    if (totalCents > ORDER_LIMITS.maxOrderTotal * 100) {
      ctx.addIssue({
        code: "custom",
        path: ["items"],
        message: `expected an order total at most ${ORDER_LIMITS.maxOrderTotal}, got ${totalCents / 100}`,
        input: order.items,
      });
    }
  });

export type Order = z.infer<typeof orderSchema>;
export type OrderItem = z.infer<typeof orderItemSchema>;

/**
 * The orders DB document: the immutable order as submitted, keyed by orderId (GET /api/orders/{orderId} shows it);
 * src/store/orderStore.ts writes and reads it.
 */
export const orderDocumentSchema = orderSchema.safeExtend({
  id: z.string().min(1),
  fingerprint: z.string().min(1).describe("orderFingerprint: a resubmission must match it"),
  submittedAt: isoTimestamp,
});
export type OrderDocument = z.infer<typeof orderDocumentSchema>;

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

/**
 * MessageId of a submission on `orders`: the orderId and the first 16 hex digits of the order's fingerprint.
 * The queue has no duplicate detection (the app tells a resend from a conflict itself), but where someone turns
 * it on, an id like this lets it drop only true duplicates, never a different version of the order.
 */
export function submissionMessageId(order: Order): string {
  return `${order.orderId}:${orderFingerprint(order)
    .replace(/^sha256:/, "")
    .slice(0, 16)}`;
}
