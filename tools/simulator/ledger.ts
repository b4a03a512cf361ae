// Idempotency store and ledger in one: the first response for an Idempotency-Key is kept and returned for
// every repeat without running the operation again, and each key's entry counts how often it was asked.
import type { Outcome } from "./services";
import { canonicalJson } from "../../src/domain/order";

export interface LedgerEntry {
  service: string;
  operation: string;
  idempotencyKey: string;
  orderId: string;
  /** Requests that reached the operation with this key: the first plus every replay. */
  requests: number;
  applied: boolean;
  /** Status of the first (stored) response. */
  status: number;
  firstAt: string;
  lastAt: string;
  effect: Record<string, unknown>;
  /** The W3C traceparent header of the first request, as it came (null: none): the caller's span of the call. */
  traceparent: string | null;
}

export interface StoredResponse {
  status: number;
  body: Record<string, unknown>;
}

export type Recorded =
  | { kind: "first"; response: StoredResponse }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "reuse"; response: StoredResponse };

interface Slot {
  entry: LedgerEntry;
  fingerprint: string;
  response: StoredResponse;
}

export class Ledger {
  private readonly slots = new Map<string, Slot>();
  private readonly entries: LedgerEntry[] = [];

  /** Runs `operation` the first time `key` is seen; replays its response afterwards. */
  run(
    request: {
      service: string;
      operation: string;
      key: string;
      orderId: string;
      body: unknown;
      traceparent?: string | undefined;
    },
    now: Date,
    operation: () => Outcome,
  ): Recorded {
    const fingerprint = canonicalJson({
      service: request.service,
      operation: request.operation,
      body: request.body,
    });
    const existing = this.slots.get(request.key);
    if (existing) {
      if (existing.fingerprint !== fingerprint) {
        const first = existing.entry;
        return {
          kind: "reuse",
          response: {
            status: 422,
            body: {
              code: "IdempotencyKeyReuse",
              message: `Idempotency-Key ${request.key} was first used for ${first.service}/${first.operation} of order ${first.orderId} with a different body`,
            },
          },
        };
      }
      existing.entry.requests += 1;
      existing.entry.lastAt = now.toISOString();
      return { kind: "replay", response: existing.response };
    }

    const outcome = operation();
    const at = now.toISOString();
    const entry: LedgerEntry = {
      service: request.service,
      operation: request.operation,
      idempotencyKey: request.key,
      orderId: request.orderId,
      requests: 1,
      applied: outcome.applied,
      status: outcome.status,
      firstAt: at,
      lastAt: at,
      effect: outcome.effect,
      traceparent: request.traceparent ?? null,
    };
    const response = { status: outcome.status, body: outcome.body };
    this.slots.set(request.key, { entry, fingerprint, response });
    this.entries.push(entry);
    return { kind: "first", response };
  }

  list(): LedgerEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }
}
