import { createHash } from "node:crypto";
import countries from "i18n-iso-countries";
import { z } from "zod";
import { ORDER_ID_PATTERN, ORDER_ID_RULE } from "./ids";

/** The first few unknown field names, and how many more: a body may carry thousands. */
const namesOf = (keys: string[]): string => {
  const shown = keys.slice(0, 5).map((k) => (k.length > 40 ? `${k.slice(0, 40)}...` : k));
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

const decimalPlacesAtMost = (n: number, places: number): boolean => {
  const scaled = n * 10 ** places;
  // Floating point: 9.99 * 100 is 998.9999999999999, so compare with a tolerance rather than exactly.
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
};

/** A price: above 0 (a payment of 0 is refused), at most ORDER_LIMITS.maxUnitPrice, in whole cents. */
const money = z
  .number(expected("a number"))
  .superRefine((n, ctx) => {
    if (!(n > 0 && n <= ORDER_LIMITS.maxUnitPrice)) {
      ctx.addIssue({
        code: "custom",
        message: `expected an amount from 0.01 to ${ORDER_LIMITS.maxUnitPrice}`,
        input: n,
      });
    } else if (!decimalPlacesAtMost(n, 2)) {
      ctx.addIssue({ code: "custom", message: "expected at most two decimal places", input: n });
    }
  })
  // What the refinement checks, for the JSON Schema of the API description (which cannot run it).
  .meta({
    exclusiveMinimum: 0,
    maximum: ORDER_LIMITS.maxUnitPrice,
    description: "At most two decimal places, and no more than the currency's minor unit",
  });

/** ISO 4217 codes of the currencies in use, from the platform's ICU data (it drops withdrawn ones). */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** Decimals by currency, worked out once each: an Intl.NumberFormat costs more to make than an order to check. */
const decimalsByCurrency = new Map<string, number>();

/** Minor units of a currency (JPY 0, EUR 2), capped at the two decimal places amounts are kept in. */
export function currencyDecimals(currency: string): number {
  let decimals = decimalsByCurrency.get(currency);
  if (decimals === undefined) {
    const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions()
      .maximumFractionDigits;
    decimals = Math.min(digits ?? 2, 2);
    // Only known currencies reach here (the schema checks CURRENCIES first), so the map stays bounded.
    decimalsByCurrency.set(currency, decimals);
  }
  return decimals;
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
          `expected an ISO 3166-1 alpha-2 country code such as DE, got ${JSON.stringify(String(issue.input).slice(0, 8))}`,
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
        .refine((code) => CURRENCIES.has(code), {
          error: (issue) =>
            `expected an ISO 4217 code of a currency in use, such as EUR, got ${JSON.stringify(String(issue.input).slice(0, 8))}`,
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
          item.unitPrice > 0 &&
          item.unitPrice <= ORDER_LIMITS.maxUnitPrice &&
          decimalPlacesAtMost(item.unitPrice, 2),
      );
    if (!CURRENCIES.has(order.currency) || !itemsValid) return;
    const decimals = currencyDecimals(order.currency);
    let totalCents = 0;
    order.items.forEach((item, i) => {
      if (!decimalPlacesAtMost(item.unitPrice, decimals)) {
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
