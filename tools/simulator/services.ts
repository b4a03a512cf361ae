// The business state of the three simulated remote services and their rules. Each operation returns the
// response to send and what it changed; idempotency and faults are handled around it (ledger.ts, faults.ts).
//
// Do/undo model, per service and order: a do creates an effect (reservation, charge, booking); an undo
// reverses the order's active effects (or the one it names) and closes the order on that service, so any
// later do for it is refused with 409 AlreadyCompensated. An undo that finds nothing to reverse still
// succeeds (a no-op) and still closes the order: the app can compensate a step whose outcome it does not
// know without racing a late or retried do.
import type { Service } from "./schemas";

export interface Outcome {
  status: number;
  body: Record<string, unknown>;
  /** True when the call changed the service's state the way the operation intends. */
  applied: boolean;
  /** What the ledger records about the call. */
  effect: Record<string, unknown>;
}

export interface ServicesOptions {
  paymentLimit: number;
  stock: Record<string, number>;
  defaultStock: number;
}

interface DoEffect {
  id: string;
  active: boolean;
  undo: () => void;
}

type Refusal = { status: number; code: string; message: string; [detail: string]: unknown };

export class RemoteServices {
  private readonly stock = new Map<string, number>();
  private readonly effects = new Map<string, DoEffect[]>();
  private readonly closedOrders = new Set<string>();
  private readonly counters = new Map<string, number>();

  constructor(private readonly options: ServicesOptions) {
    for (const [sku, quantity] of Object.entries(options.stock)) this.stock.set(sku, quantity);
  }

  available(sku: string): number {
    return this.stock.get(sku) ?? this.options.defaultStock;
  }

  reserve(orderId: string, items: { sku: string; quantity: number }[]): Outcome {
    const wanted = new Map<string, number>();
    for (const { sku, quantity } of items) wanted.set(sku, (wanted.get(sku) ?? 0) + quantity);
    const shortages = [...wanted]
      .filter(([sku, quantity]) => quantity > this.available(sku))
      .map(([sku, requested]) => ({ sku, requested, available: this.available(sku) }));

    return this.doOnce(
      "inventory",
      orderId,
      "RES",
      () => {
        if (shortages.length > 0) {
          const list = shortages.map((s) => `${s.sku} (requested ${s.requested}, available ${s.available})`);
          return {
            status: 409,
            code: "OutOfStock",
            message: `Not enough stock for ${list.join(", ")}`,
            shortages,
          };
        }
        return undefined;
      },
      (reservationId) => {
        for (const [sku, quantity] of wanted) this.stock.set(sku, this.available(sku) - quantity);
        return {
          body: { reservationId, items },
          undo: () => {
            for (const [sku, quantity] of wanted) this.stock.set(sku, this.available(sku) + quantity);
          },
        };
      },
    );
  }

  release(orderId: string, reservationId?: string): Outcome {
    return this.undoAll("inventory", orderId, reservationId, () => ({}));
  }

  charge(orderId: string, amount: number, currency: string): Outcome {
    const limit = this.options.paymentLimit;
    return this.doOnce(
      "payment",
      orderId,
      "CHG",
      () =>
        amount > limit
          ? {
              status: 402,
              code: "PaymentDeclined",
              message: `Charge of ${amount} ${currency} exceeds the limit of ${limit}`,
              limit,
            }
          : undefined,
      (chargeId) => ({ body: { chargeId, amount, currency }, undo: () => undefined }),
    );
  }

  refund(orderId: string, chargeId?: string): Outcome {
    return this.undoAll("payment", orderId, chargeId, (undone) => ({
      refundId: undone.length > 0 ? this.nextId("REF") : null,
    }));
  }

  book(orderId: string, address: Record<string, unknown>): Outcome {
    return this.doOnce(
      "shipping",
      orderId,
      "TRK",
      () => undefined,
      (trackingNumber) => ({
        body: { trackingNumber, address },
        undo: () => undefined,
      }),
    );
  }

  cancel(orderId: string, trackingNumber?: string): Outcome {
    return this.undoAll("shipping", orderId, trackingNumber, () => ({}));
  }

  private doOnce(
    service: Service,
    orderId: string,
    idPrefix: string,
    refuse: () => Refusal | undefined,
    apply: (id: string) => { body: Record<string, unknown>; undo: () => void },
  ): Outcome {
    const slot = `${service}:${orderId}`;
    const refusal: Refusal | undefined = this.closedOrders.has(slot)
      ? {
          status: 409,
          code: "AlreadyCompensated",
          message: `Order ${orderId} was already compensated on ${service}; a new ${service} operation for it is refused`,
        }
      : refuse();
    if (refusal) {
      const { status, ...body } = refusal;
      return { status, body, applied: false, effect: { refused: refusal.code } };
    }
    const id = this.nextId(idPrefix);
    const { body, undo } = apply(id);
    const effects = this.effects.get(slot) ?? [];
    effects.push({ id, active: true, undo });
    this.effects.set(slot, effects);
    const response = { orderId, ...body };
    return { status: 200, body: response, applied: true, effect: response };
  }

  private undoAll(
    service: Service,
    orderId: string,
    targetId: string | undefined,
    extra: (undone: string[]) => Record<string, unknown>,
  ): Outcome {
    const slot = `${service}:${orderId}`;
    const effects = this.effects.get(slot) ?? [];
    if (targetId !== undefined && !effects.some((e) => e.id === targetId)) {
      return {
        status: 404,
        body: { code: "NotFound", message: `${targetId} is not a ${service} effect of order ${orderId}` },
        applied: false,
        effect: { refused: "NotFound" },
      };
    }
    const undone: string[] = [];
    for (const effect of effects) {
      if (!effect.active || (targetId !== undefined && effect.id !== targetId)) continue;
      effect.undo();
      effect.active = false;
      undone.push(effect.id);
    }
    this.closedOrders.add(slot);
    const body = { orderId, ...extra(undone), undone, noop: undone.length === 0 };
    return { status: 200, body, applied: undone.length > 0, effect: { ...body, tombstone: true } };
  }

  private nextId(prefix: string): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return `${prefix}-${String(n).padStart(6, "0")}`;
  }
}
