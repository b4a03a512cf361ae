/**
 * Realistic, valid sample orders for `npm run submit`, demos, chaos tests and benchmarks. It depends on the
 * domain's order schema only (no Node or Azure APIs), so it can move next to whatever needs it, the dashboard
 * included. Every order it returns has passed `orderSchema`.
 */
import { orderSchema, orderTotal, type Order, type OrderItem } from "../src/domain/order";
import { validate } from "../src/domain/validation";
import { DEFAULT_PAYMENT_LIMIT } from "./simulator/defaults";

/** The payment limit sample orders are made to pass or exceed: the simulator's own default. */
export const SAMPLE_PAYMENT_LIMIT = DEFAULT_PAYMENT_LIMIT;
export const DEFAULT_SAMPLE_REPLY_TO = "status-demo";

export interface SampleOrderOptions {
  /** orderId is `${prefix}-${i}`. */
  prefix: string;
  /** Status queue named in the order; default "status-demo". null leaves replyTo out (no status messages). */
  replyTo?: string | null;
  /** Source of randomness in [0, 1); default Math.random. Pass seededRandom(seed) (seededRandom.ts) for repeatable orders. */
  random?: () => number;
  /**
   * Fraction (0..1) of orders whose total exceeds `paymentLimit`, so payment declines them and the workflow
   * compensates. Which ones depends on i alone (spread evenly), never on `random`. Default 0.
   */
  declined?: number;
  /** Default SAMPLE_PAYMENT_LIMIT, the simulator's default. */
  paymentLimit?: number;
}

/** A catalogue rather than random prices: the same SKU costs the same in every order, as in a real shop. */
const CATALOGUE: readonly number[] = [
  4.99, 7.5, 9.99, 12, 14.95, 19.99, 24.5, 29.99, 34, 39.95, 49.99, 59, 74.99, 89.9, 99.99, 129, 149.95, 179,
  219.99, 249,
];
/** SKU-16..SKU-20: a bulk line of one of these passes the payment limit with a quantity far below stock. */
const PREMIUM_FIRST_SKU = 16;

interface Destination {
  address: Order["shippingAddress"];
  currency: string;
}

const DESTINATIONS: readonly Destination[] = [
  {
    address: { line1: "Unter den Linden 77", city: "Berlin", postalCode: "10117", country: "DE" },
    currency: "EUR",
  },
  {
    address: { line1: "12 Rue de Rivoli", city: "Paris", postalCode: "75004", country: "FR" },
    currency: "EUR",
  },
  {
    address: { line1: "Damrak 1", city: "Amsterdam", postalCode: "1012 LG", country: "NL" },
    currency: "EUR",
  },
  {
    address: { line1: "221B Baker Street", city: "London", postalCode: "NW1 6XE", country: "GB" },
    currency: "GBP",
  },
  {
    address: { line1: "400 Broad St", city: "Seattle", postalCode: "98109", country: "US" },
    currency: "USD",
  },
  {
    address: { line1: "350 Fifth Avenue", city: "New York", postalCode: "10118", country: "US" },
    currency: "USD",
  },
];

const CUSTOMERS = 500;

/** ORD-<yyyymmddHHMMss> (UTC): successive runs get distinct orderIds, so duplicate detection drops none. */
export function defaultOrderPrefix(now: Date = new Date()): string {
  return `ORD-${now
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replace(/[-T:]/g, "")}`;
}

/**
 * Whether order i (1-based) is one of the declined ones: exactly floor(n * fraction) of orders 1..n are,
 * evenly spread (0.2 makes 5, 10, 15, ... declined), so a count and a fraction predict the outcome.
 */
export function isDeclinedIndex(i: number, fraction: number): boolean {
  // The epsilon absorbs binary fractions: 0.29 * 100 is 28.999999999999996.
  const upTo = (n: number): number => Math.floor(n * fraction + 1e-9);
  return upTo(i) > upTo(i - 1);
}

/** Whether the simulator's payment service would decline this order's charge. */
export function exceedsPaymentLimit(order: Order, limit: number = SAMPLE_PAYMENT_LIMIT): boolean {
  return orderTotal(order) > limit;
}

function pick(random: () => number, size: number): number {
  return Math.min(size - 1, Math.floor(random() * size));
}

function skuOf(index: number): string {
  return `SKU-${index + 1}`;
}

function priceOf(index: number): number {
  const price = CATALOGUE[index];
  if (price === undefined) throw new Error(`no catalogue price for ${skuOf(index)}`);
  return price;
}

function catalogueItems(random: () => number): { items: OrderItem[]; used: Set<number> } {
  const lines = 1 + pick(random, 3);
  const used = new Set<number>();
  while (used.size < lines) used.add(pick(random, CATALOGUE.length));
  const items = [...used].map((index) => ({
    sku: skuOf(index),
    quantity: 1 + pick(random, 3),
    unitPrice: priceOf(index),
  }));
  return { items, used };
}

/** A bulk line of a premium SKU large enough to take the total past `limit`. */
function bulkLine(random: () => number, used: Set<number>, subtotal: number, limit: number): OrderItem {
  const premium = [];
  for (let index = PREMIUM_FIRST_SKU - 1; index < CATALOGUE.length; index++) {
    if (!used.has(index)) premium.push(index);
  }
  const index = premium[pick(random, premium.length)] ?? CATALOGUE.length - 1;
  const unitPrice = priceOf(index);
  const needed = Math.max(0, limit - subtotal);
  return { sku: skuOf(index), quantity: Math.floor(needed / unitPrice) + 1 + pick(random, 3), unitPrice };
}

/** Order number i (1-based by convention): orderId `${prefix}-${i}`, 1-3 catalogue lines, quantities 1-3. */
export function sampleOrder(i: number, opts: SampleOrderOptions): Order {
  const random = opts.random ?? Math.random;
  const limit = opts.paymentLimit ?? SAMPLE_PAYMENT_LIMIT;
  const replyTo = opts.replyTo === undefined ? DEFAULT_SAMPLE_REPLY_TO : opts.replyTo;
  const destination = DESTINATIONS[pick(random, DESTINATIONS.length)] ?? DESTINATIONS[0]!;
  const { items, used } = catalogueItems(random);
  const draft: Order = {
    orderId: `${opts.prefix}-${i}`,
    customerId: `C-${1 + pick(random, CUSTOMERS)}`,
    items,
    currency: destination.currency,
    shippingAddress: { ...destination.address },
    ...(replyTo !== null ? { replyTo } : {}),
  };
  const declined = isDeclinedIndex(i, opts.declined ?? 0);
  if (declined) items.push(bulkLine(random, used, orderTotal(draft), limit));
  // The schema is the contract with the app: an order it would reject is a bug here, not sample data.
  const checked = validate(orderSchema, draft);
  if (!checked.ok) {
    throw new Error(
      `sampleOrder(${i}): prefix "${opts.prefix}" / replyTo "${String(replyTo)}" give an invalid order: ${checked.message}`,
    );
  }
  if (exceedsPaymentLimit(checked.value, limit) !== declined) {
    throw new Error(
      `sampleOrder(${i}): total ${orderTotal(checked.value)} does not match the payment limit ${limit}` +
        ` (${declined ? "should exceed it" : "should stay within it"}); use a limit above 2000`,
    );
  }
  return checked.value;
}

/** Orders 1..count; the prefix defaults to defaultOrderPrefix(), taken once for the whole run. */
export function sampleOrders(count: number, opts: Partial<SampleOrderOptions> = {}): Order[] {
  const prefix = opts.prefix ?? defaultOrderPrefix();
  const orders: Order[] = [];
  for (let i = 1; i <= count; i++) orders.push(sampleOrder(i, { ...opts, prefix }));
  return orders;
}
