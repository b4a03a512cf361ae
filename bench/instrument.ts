/**
 * Counters on the emulators of this process, for "requests per order" figures: every HTTP request the Cosmos DB
 * stand-in serves (through its onRequest hook), and every message the Service Bus emulator's queues accept,
 * drop as duplicates or hand to a receiver (by wrapping MessageQueue's send and receive). The counting is
 * benchmark instrumentation only; the emulators behave exactly as without it.
 */
import type { IncomingMessage } from "node:http";
import { MessageQueue } from "devhost/emulators";

export interface BusCounts {
  /** Messages enqueued (duplicates excluded; dead-letter moves are not sends). */
  sent: number;
  /** Sends that duplicate detection dropped. */
  duplicates: number;
  /** Messages handed to a receiver (peek-lock or receive-and-delete). */
  deliveries: number;
}

const bus: BusCounts = { sent: 0, duplicates: 0, deliveries: 0 };
let installed = false;

/** Wraps MessageQueue.prototype.send/receive once per process; the counters start at zero on reset. */
export function countServiceBus(): { counts(): BusCounts; reset(): void } {
  if (!installed) {
    const proto = MessageQueue.prototype;
    if (typeof proto.send !== "function" || typeof proto.receive !== "function")
      throw new Error("MessageQueue has no send/receive to count: update bench/instrument.ts");
    const send = proto.send;
    const receive = proto.receive;
    proto.send = function (this: MessageQueue, ...args: Parameters<typeof send>) {
      const stored = send.apply(this, args);
      if (stored) bus.sent++;
      else bus.duplicates++;
      return stored;
    };
    proto.receive = function (this: MessageQueue, ...args: Parameters<typeof receive>) {
      const stored = receive.apply(this, args);
      if (stored) bus.deliveries++;
      return stored;
    };
    installed = true;
  }
  return {
    counts: () => ({ ...bus }),
    reset: () => Object.assign(bus, { sent: 0, duplicates: 0, deliveries: 0 }),
  };
}

/** User-agent suffix of the benchmark's own Cosmos DB client, whose requests are not the app's. */
export const OBSERVER_USER_AGENT = "bench-observer";

/** Counts the app's requests to the Cosmos DB stand-in (the benchmark's own are told apart by user agent). */
export class StoreRequestCounter {
  count = 0;
  readonly onRequest = (request: IncomingMessage): void => {
    if (!String(request.headers["user-agent"] ?? "").includes(OBSERVER_USER_AGENT)) this.count++;
  };
}
