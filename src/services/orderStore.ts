import type { Container } from "@azure/cosmos";
import { orderFingerprint, type Order } from "../domain";
import { cosmosStatus } from "./cosmos";

/** The orders DB document: the immutable order as submitted, keyed by orderId. */
export interface OrderDocument extends Order {
  id: string;
  fingerprint: string;
  submittedAt: string;
}

export type EnsureOrderOutcome =
  | { kind: "created"; document: OrderDocument }
  | { kind: "existing"; document: OrderDocument }
  | { kind: "conflict"; document: OrderDocument; fingerprint: string };

/**
 * The orders container. Written once per orderId and never overwritten: a redelivered submission finds its own
 * document (same fingerprint) and goes on; different data for a known id is a conflict the caller must surface.
 */
export class OrderStore {
  constructor(private readonly container: Container) {}

  async get(orderId: string): Promise<OrderDocument | undefined> {
    const { resource } = await this.container.item(orderId, orderId).read<OrderDocument>();
    return resource ?? undefined;
  }

  async ensure(order: Order, now: Date): Promise<EnsureOrderOutcome> {
    const fingerprint = orderFingerprint(order);
    const document: OrderDocument = {
      ...order,
      id: order.orderId,
      fingerprint,
      submittedAt: now.toISOString(),
    };
    try {
      await this.container.items.create(document);
      return { kind: "created", document };
    } catch (error) {
      if (cosmosStatus(error) !== 409) throw error;
    }
    const existing = await this.get(order.orderId);
    if (!existing) throw new Error(`order ${order.orderId} reported as existing but cannot be read`);
    return existing.fingerprint === fingerprint
      ? { kind: "existing", document: existing }
      : { kind: "conflict", document: existing, fingerprint };
  }
}
