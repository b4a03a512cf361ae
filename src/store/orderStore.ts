import type { Container } from "@azure/cosmos";
import { orderFingerprint, type Order, type OrderDocument } from "../domain";
import { cosmosStatus } from "./cosmosErrors";

/** Where an order document stands in the order of submission: what the Supervisor's check of submissions pages by. */
export interface SubmittedOrder {
  orderId: string;
  submittedAt: string;
}

export type EnsureOrderOutcome =
  | { kind: "created"; document: OrderDocument }
  | { kind: "existing"; document: OrderDocument }
  | { kind: "conflict"; document: OrderDocument; fingerprint: string };

/** Order documents an instance keeps in memory: about the orders in flight on it, a few KB each. */
export const ORDER_CACHE_SIZE = 2_000;

/**
 * The orders container. Written once per orderId and never overwritten: a redelivered submission finds its own
 * document (same fingerprint) and goes on; different data for a known id is a conflict the caller must surface.
 * Because a document never changes once written, an instance keeps the ones it has read or written (the
 * Scheduler reads the order at every step): a cached copy is never stale.
 */
export class OrderStore {
  private readonly cache = new Map<string, OrderDocument>();

  constructor(private readonly container: Container) {}

  async get(orderId: string): Promise<OrderDocument | undefined> {
    const cached = this.cache.get(orderId);
    if (cached) return cached;
    const { resource } = await this.container.item(orderId, orderId).read<OrderDocument>();
    if (resource) this.remember(resource);
    return resource ?? undefined;
  }

  /** Keeps at most ORDER_CACHE_SIZE documents, dropping the oldest first. */
  private remember(document: OrderDocument): void {
    this.cache.delete(document.orderId);
    this.cache.set(document.orderId, document);
    if (this.cache.size > ORDER_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
  }

  async ensure(order: Order, now: Date): Promise<EnsureOrderOutcome> {
    const fingerprint = orderFingerprint(order);
    // A document this instance has seen already (the front door created it): no create that can only answer 409.
    const known = this.cache.get(order.orderId);
    if (known) {
      return known.fingerprint === fingerprint
        ? { kind: "existing", document: known }
        : { kind: "conflict", document: known, fingerprint };
    }
    const document: OrderDocument = {
      ...order,
      id: order.orderId,
      fingerprint,
      submittedAt: now.toISOString(),
    };
    try {
      const { resource } = await this.container.items.create(document);
      if (resource) this.remember(resource);
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

  /**
   * The orders submitted after `after` and at or before `upTo`, oldest first, a page at a time (a cross-partition
   * query on the orders' range index of submittedAt; only the two fields come back).
   */
  async submittedBetween(
    after: string,
    upTo: string,
    pageSize: number,
    continuation: string | undefined,
  ): Promise<{ items: SubmittedOrder[]; continuation: string | undefined }> {
    const response = await this.container.items
      .query<SubmittedOrder>(
        {
          query:
            "SELECT c.orderId, c.submittedAt FROM c WHERE c.submittedAt > @after AND c.submittedAt <= @upTo " +
            "ORDER BY c.submittedAt ASC",
          parameters: [
            { name: "@after", value: after },
            { name: "@upTo", value: upTo },
          ],
        },
        { maxItemCount: pageSize, ...(continuation ? { continuationToken: continuation } : {}) },
      )
      .fetchNext();
    return {
      items: response.resources ?? [],
      continuation: response.hasMoreResults ? response.continuationToken : undefined,
    };
  }
}
