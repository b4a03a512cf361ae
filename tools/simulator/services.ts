// The generic remote service: what every served service does, with or without a behaviour (./behaviours.ts).
// Each operation returns the response to send and what it changed; idempotency and faults are handled around
// it (ledger.ts, faults.ts).
//
// Do/undo model, per service and order: a do creates an effect with an id (RES-000001...); an undo reverses
// the order's active effects (or the one its body names) and closes the order on that service, so any later
// do for it is refused with 409 AlreadyCompensated. An undo that finds nothing to reverse still succeeds (a
// no-op) and still closes the order: the app can compensate a step whose outcome it does not know without
// racing a late or retried do.
import type { z } from "zod";
import type { Role } from "./served";

export interface Outcome {
  status: number;
  body: Record<string, unknown>;
  /** True when the call changed the service's state the way the operation intends. */
  applied: boolean;
  /** What the ledger records about the call. */
  effect: Record<string, unknown>;
}

/** A behaviour's refusal of a do: answered as `{code, message, ...details}` with `status`, nothing applied. */
export type Refusal = { status: number; code: string; message: string; [detail: string]: unknown };

/**
 * A service's own rules on top of the generic do/undo. Every member is optional: a service without a behaviour
 * answers a do with `{orderId, id}` and applies nothing but the ledger's record of it. One is made per reset of
 * the simulator (DELETE /_ledger), so its state (stock...) starts over with the ledger.
 */
export interface Behaviour<Body extends { orderId: string } = { orderId: string }> {
  /**
   * The field that names a do's effect in its answer and in its undo's body: what the step's compensationFrom
   * (src/domain/process.ts) picks. Default `id`.
   */
  readonly idField?: string;
  /** Prefix of the effects' ids: `RES` gives RES-000001. Default: the service's name in capitals. */
  readonly idPrefix?: string;
  /** The do's body, for the fields the behaviour reads (refused with 400 naming them); default: any object with an orderId. */
  readonly doBody?: z.ZodType<Body>;
  /** Fields GET /_health adds, so that a client needs no copy of a rule (the payment limit). */
  readonly health?: Record<string, unknown>;
  /** Decides a do before it applies: a refusal, or undefined to apply it. */
  refuse?(body: Body): Refusal | undefined;
  /** Applies a do (its id already drawn): the fields its answer adds, and how an undo reverses it. */
  apply?(body: Body): { answer?: Record<string, unknown>; undo?: () => void };
  /** Fields an undo's answer adds, given the ids it reversed (`nextId` draws an id such as REF-000001). */
  undoAnswer?(undone: readonly string[], nextId: (prefix: string) => string): Record<string, unknown>;
  /** GET /<service>/<path>: the answer, or undefined for 404. */
  get?(path: string): Record<string, unknown> | undefined;
}

/** Types a behaviour's methods by its body schema. */
export function behaviour<Body extends { orderId: string }>(b: Behaviour<Body>): Behaviour {
  return b as Behaviour;
}

/** The effect field of a service's behaviour (default `id`): a do answers it, its undo may name it. */
export const idFieldOf = (b: Behaviour | undefined): string => b?.idField ?? "id";

interface DoEffect {
  id: string;
  active: boolean;
  undo: () => void;
}

export class RemoteServices {
  private readonly effects = new Map<string, DoEffect[]>();
  private readonly closedOrders = new Set<string>();
  private readonly counters = new Map<string, number>();

  constructor(private readonly behaviours: Readonly<Record<string, Behaviour>>) {}

  /** The service's behaviour, if it has one. */
  behaviourOf(service: string): Behaviour | undefined {
    return Object.hasOwn(this.behaviours, service) ? this.behaviours[service] : undefined;
  }

  /** Runs a validated body: the do's schema is the behaviour's, the undo's names the order and maybe the id. */
  run(service: string, role: Role, body: { orderId: string } & Record<string, unknown>): Outcome {
    return role === "do" ? this.do(service, body) : this.undo(service, body);
  }

  private do(service: string, body: { orderId: string }): Outcome {
    const b = this.behaviourOf(service);
    const { orderId } = body;
    const slot = `${service}:${orderId}`;
    const refusal: Refusal | undefined = this.closedOrders.has(slot)
      ? {
          status: 409,
          code: "AlreadyCompensated",
          message: `Order ${orderId} was already compensated on ${service}; a new ${service} operation for it is refused`,
        }
      : b?.refuse?.(body);
    if (refusal) {
      const { status, ...answer } = refusal;
      return { status, body: answer, applied: false, effect: { refused: refusal.code } };
    }
    const id = this.nextId(b?.idPrefix ?? service.toUpperCase());
    const { answer = {}, undo = () => undefined } = b?.apply?.(body) ?? {};
    const effects = this.effects.get(slot) ?? [];
    effects.push({ id, active: true, undo });
    this.effects.set(slot, effects);
    const response = { orderId, [idFieldOf(b)]: id, ...answer };
    return { status: 200, body: response, applied: true, effect: response };
  }

  private undo(service: string, body: { orderId: string } & Record<string, unknown>): Outcome {
    const b = this.behaviourOf(service);
    const { orderId } = body;
    const named = body[idFieldOf(b)];
    const targetId = typeof named === "string" ? named : undefined;
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
    const extra = b?.undoAnswer?.(undone, (prefix) => this.nextId(prefix)) ?? {};
    const answer = { orderId, ...extra, undone, noop: undone.length === 0 };
    return { status: 200, body: answer, applied: undone.length > 0, effect: { ...answer, tombstone: true } };
  }

  private nextId(prefix: string): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return `${prefix}-${String(n).padStart(6, "0")}`;
  }
}
