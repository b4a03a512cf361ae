/**
 * Keeps one AMQP settlement from being sent as another's. rhea (3.0.5) writes the dispositions a session owes in
 * ranges, and its range writer joins the second delivery of a batch to the first whatever their outcomes
 * (`write_dispositions` in rhea/lib/session.js compares outcomes only once a range holds two deliveries). So when
 * the emulator refuses one transfer (a message over the size limit) and accepts the next in the same tick, both
 * are sent as refused, and the client fails a send that the broker kept; when a client completes one message
 * and abandons the next in the same tick, both are sent as completed, and the abandoned message is lost.
 *
 * The repair: a settlement whose outcome is not `accepted` is written at once, in a frame of its own, and never
 * queued; only acceptances are left to rhea's batching, where joining them is right. It is installed on rhea's
 * session prototypes, so it covers the emulator's links and the devhost's own Service Bus clients alike, which
 * share the one rhea the package depends on.
 */
import { createRequire } from "node:module";
import { message as rheaMessage } from "rhea";

interface Settling {
  id: number;
  settled: boolean;
  state?: unknown;
  remote_settled?: boolean;
  link: {
    is_receiver(): boolean;
    session: { output(frame: unknown): void };
    connection: { _register(): void };
  };
}

type Update = (this: unknown, delivery: Settling | undefined, settled: boolean, state?: unknown) => void;
interface SessionSide {
  update: Update;
}

const requireFromHere = createRequire(__filename);
const installed = Symbol.for("devhost.amqpDispositions");

/** Installs the repair once per rhea module; later calls do nothing. */
export function keepDispositionsApart(): void {
  const frames = requireFromHere("rhea/lib/frames") as {
    disposition(fields: Record<string, unknown>): unknown;
  };
  const Session = requireFromHere("rhea/lib/session") as new (
    connection: unknown,
    channel: number,
  ) => { incoming: object; outgoing: object };
  // A session on no connection, made only to reach the prototypes of its two sides: rhea exports neither.
  const probe = new Session({}, 0);
  for (const side of [probe.incoming, probe.outgoing]) {
    const prototype = Object.getPrototypeOf(side) as SessionSide & { [installed]?: true };
    if (prototype[installed]) continue;
    const batched = prototype.update;
    prototype.update = function (delivery, settled, state) {
      const outcome = state === undefined ? delivery?.state : state;
      if (
        !delivery ||
        delivery.remote_settled ||
        rheaMessage.is_accepted(outcome as Parameters<typeof rheaMessage.is_accepted>[0])
      ) {
        batched.call(this, delivery, settled, state);
        return;
      }
      delivery.settled = settled;
      if (state !== undefined) delivery.state = state;
      delivery.link.session.output(
        frames.disposition({
          role: delivery.link.is_receiver(),
          first: delivery.id,
          last: delivery.id,
          state: delivery.state,
          settled: delivery.settled,
        }),
      );
      // The settled delivery leaves the session's buffer when rhea next processes the session.
      delivery.link.connection._register();
    };
    prototype[installed] = true;
  }
}
