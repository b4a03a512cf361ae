// The sample's business rules, as optional behaviours of their services: inventory's stock, payment's limit and
// shipping's booking. Every declared service is served without one (./services.ts); a behaviour adds what the
// generic do/undo cannot know: the fields the workflow's compensationFrom picks (reservationId, chargeId,
// trackingNumber), the body fields a rule reads, refusals, and state that an undo restores. A fork's service
// gets a behaviour by adding an entry to BEHAVIOURS; the services' names are the declaration's
// (src/domain/process.ts), and test/unit/process.test.ts refuses an entry for an undeclared one.
import { z } from "zod";
import { DEFAULT_PAYMENT_LIMIT, DEFAULT_STOCK } from "./defaults";
import { orderId } from "./schemas";
import { behaviour, type Behaviour } from "./services";

/** The behaviours' settings, options of startSimulator. */
export interface BehaviourOptions {
  /** A charge whose amount exceeds this is declined (402); default 10000. */
  paymentLimit?: number;
  /** Initial stock per sku; a sku not listed has `defaultStock`. */
  stock?: Record<string, number>;
  /** Stock of every sku not in `stock`; default 1000. */
  defaultStock?: number;
}

const reserveBody = z.object({
  orderId,
  items: z
    .array(z.object({ sku: z.string().trim().min(1).max(200), quantity: z.number().int().positive() }))
    .min(1),
});

/** Inventory: a reserve takes all its lines or, when any sku is short, none; a release puts them back. */
function stock(options: BehaviourOptions): Behaviour {
  const levels = new Map(Object.entries(options.stock ?? {}));
  const available = (sku: string): number => levels.get(sku) ?? options.defaultStock ?? DEFAULT_STOCK;
  // Lines of the same sku in one reservation are added up.
  const wanted = (items: { sku: string; quantity: number }[]): Map<string, number> => {
    const total = new Map<string, number>();
    for (const { sku, quantity } of items) total.set(sku, (total.get(sku) ?? 0) + quantity);
    return total;
  };
  return behaviour({
    idField: "reservationId",
    idPrefix: "RES",
    doBody: reserveBody,
    refuse({ items }) {
      const shortages = [...wanted(items)]
        .filter(([sku, quantity]) => quantity > available(sku))
        .map(([sku, requested]) => ({ sku, requested, available: available(sku) }));
      if (shortages.length === 0) return undefined;
      const list = shortages.map((s) => `${s.sku} (requested ${s.requested}, available ${s.available})`);
      return {
        status: 409,
        code: "OutOfStock",
        message: `Not enough stock for ${list.join(", ")}`,
        shortages,
      };
    },
    apply({ items }) {
      const taken = wanted(items);
      for (const [sku, quantity] of taken) levels.set(sku, available(sku) - quantity);
      return {
        answer: { items },
        undo: () => {
          for (const [sku, quantity] of taken) levels.set(sku, available(sku) + quantity);
        },
      };
    },
    get(path) {
      const raw = /^stock\/([^/]+)$/.exec(path)?.[1];
      if (raw === undefined) return undefined;
      const sku = decodeURIComponent(raw);
      return { sku, available: available(sku) };
    },
  });
}

const chargeBody = z.object({
  orderId,
  amount: z.number().positive().finite(),
  currency: z.string().regex(/^[A-Z]{3}$/, "expected an ISO 4217 code such as EUR"),
});

/** Payment: a charge over the limit is declined for good (402); a refund that reversed a charge has its id. */
function paymentLimit(options: BehaviourOptions): Behaviour {
  const limit = options.paymentLimit ?? DEFAULT_PAYMENT_LIMIT;
  return behaviour({
    idField: "chargeId",
    idPrefix: "CHG",
    doBody: chargeBody,
    // The dashboard's playground makes orders that are declined without a copy of the limit.
    health: { paymentLimit: limit },
    refuse: ({ amount, currency }) =>
      amount > limit
        ? {
            status: 402,
            code: "PaymentDeclined",
            message: `Charge of ${amount} ${currency} exceeds the limit of ${limit}`,
            limit,
          }
        : undefined,
    apply: ({ amount, currency }) => ({ answer: { amount, currency } }),
    undoAnswer: (undone, nextId) => ({ refundId: undone.length > 0 ? nextId("REF") : null }),
  });
}

const bookBody = z.object({
  orderId,
  address: z.object({
    line1: z.string().trim().min(1),
    city: z.string().trim().min(1),
    postalCode: z.string().trim().min(1),
    country: z.string().regex(/^[A-Z]{2}$/, "expected an ISO 3166 alpha-2 code such as DE"),
  }),
});

/** Shipping: a booking to a full address, answered with its tracking number. */
function booking(): Behaviour {
  return behaviour({
    idField: "trackingNumber",
    idPrefix: "TRK",
    doBody: bookBody,
    apply: ({ address }) => ({ answer: { address } }),
  });
}

/** The behaviour of each service that has one, made anew on every reset (DELETE /_ledger). */
export const BEHAVIOURS: Readonly<Record<string, (options: BehaviourOptions) => Behaviour>> = {
  inventory: stock,
  payment: paymentLimit,
  shipping: booking,
};
