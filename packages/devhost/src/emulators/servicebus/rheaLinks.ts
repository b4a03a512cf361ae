/**
 * Link fields rhea 3 keeps on its objects but leaves out of its typings: the attach frames each side
 * sent, the credit, and the session's transfer cursor. Read here, in one place, with types.
 */
import type { Delivery, Receiver, Sender, Source, TerminusOptions } from "rhea";

export interface AttachFields {
  name?: string;
  source?: Source;
  target?: TerminusOptions;
  snd_settle_mode?: number;
  rcv_settle_mode?: number;
  max_message_size?: unknown;
}

interface LinkInternals {
  remote: { attach?: AttachFields };
  local: { attach: AttachFields };
  credit: number;
  session: { outgoing: { next_pending_delivery: number } };
}

const internals = (link: Sender | Receiver) => link as unknown as LinkInternals;

/** The attach the client sent. */
export function remoteAttach(link: Sender | Receiver): AttachFields {
  return internals(link).remote.attach ?? {};
}

/** The attach the emulator will answer with (editable until rhea sends it on the next tick). */
export function localAttach(link: Sender | Receiver): AttachFields {
  return internals(link).local.attach;
}

/** The link credit the client granted and rhea has not yet used up by transfers. */
export function linkCredit(link: Sender): number {
  return internals(link).credit;
}

/** Delivery ids below this one are on the wire; the rest wait in the session for credit or window. */
export function nextUntransferredDeliveryId(link: Sender): number {
  return internals(link).session.outgoing.next_pending_delivery;
}

/**
 * Lets rhea drop a delivery the emulator has settled. rhea frees an outgoing delivery's slot in the
 * session (2048 by default) only once both ends have settled it, but in rcv-settle-mode second the
 * sender's settlement is the last word: the SDK settles silently and never says so. Without this,
 * every session stalls after 2048 peek-locked messages.
 */
export function forgetSettledDelivery(delivery: Delivery): void {
  (delivery as unknown as { remote_settled: boolean }).remote_settled = true;
}
