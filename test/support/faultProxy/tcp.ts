/**
 * A TCP proxy on 127.0.0.1 whose network can be broken at run time: what stands between the app and the Service
 * Bus emulator's AMQP port in the fault tests (the why of each fault: ../faultProxy.ts). Bytes are copied by hand,
 * not piped, so that a blackhole can take them out of the stream and give them back (or not) when it ends.
 */
import net from "node:net";

export type TcpMode = "pass" | "reset" | "blackhole" | "refuse";

export interface TcpTarget {
  host: string;
  port: number;
}

export interface TcpStats {
  /** Connections accepted since start, whatever became of them. */
  accepted: number;
  /** Connections open now (client side accepted, not yet closed). */
  open: number;
  /** Connections this proxy ended with an RST: `reset()`, reset mode, refuse mode, a blackhole ending in "reset". */
  reset: number;
  /** Connections refused (closed at once) in refuse mode; counted in `reset` too. */
  refused: number;
  /** Bytes delivered client → target and target → client. */
  bytesUp: number;
  bytesDown: number;
  /** Bytes a blackhole took out of the stream (delivered late if it ended in "deliver", else lost). */
  blackholedBytes: number;
}

export interface BlackholeOptions {
  /** Back to pass after this long; default: until `clear()`. */
  forMs?: number;
  /**
   * How the outage ends for the connections it caught. "deliver" (default): the bytes held back arrive, in order,
   * as TCP's retransmissions would deliver them once the network heals. "reset": those connections are reset, as
   * they are once an outage outlasts TCP's retransmissions or a peer's idle timeout.
   */
  end?: "deliver" | "reset";
}

export interface TcpFaultProxy {
  /** "127.0.0.1". */
  readonly host: string;
  readonly port: number;
  readonly mode: TcpMode;
  /**
   * Resets (RST) every open connection now, and with `forMs`, every new one for that long. Resolves with how many
   * were open.
   */
  reset(options?: { forMs?: number }): number;
  /** Holds every byte in both directions, on open and new connections, while connections stay open. */
  blackhole(options?: BlackholeOptions): void;
  /** Resets each new connection as soon as it is accepted (open ones carry on), until cleared or `forMs` ends. */
  refuse(options?: { forMs?: number }): void;
  /** Back to pass: a blackhole ends as it was told to. */
  clear(): void;
  stats(): TcpStats;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/** One client connection and its connection to the target; `held` are a blackhole's bytes, in arrival order. */
interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  held: Array<{ to: "up" | "down"; chunk: Buffer }>;
  /** A side that ended during a blackhole: its FIN is held back too. */
  heldEnd: { up: boolean; down: boolean };
}

export async function startTcpFaultProxy(target: TcpTarget): Promise<TcpFaultProxy> {
  const pairs = new Set<Pair>();
  const stats: TcpStats = {
    accepted: 0,
    open: 0,
    reset: 0,
    refused: 0,
    bytesUp: 0,
    bytesDown: 0,
    blackholedBytes: 0,
  };
  let mode: TcpMode = "pass";
  let blackholeEnd: "deliver" | "reset" = "deliver";
  let timer: NodeJS.Timeout | undefined;

  const rst = (socket: net.Socket): void => {
    // resetAndDestroy needs a TCP handle; a socket already destroyed has none (and needs nothing).
    if (socket.destroyed) return;
    try {
      socket.resetAndDestroy();
    } catch {
      socket.destroy();
    }
  };
  const resetPair = (pair: Pair): void => {
    stats.reset++;
    pairs.delete(pair);
    rst(pair.client);
    rst(pair.upstream);
  };

  const forward = (pair: Pair, to: "up" | "down", chunk: Buffer): void => {
    if (mode === "blackhole") {
      stats.blackholedBytes += chunk.length;
      pair.held.push({ to, chunk });
      return;
    }
    const [from, dest] = to === "up" ? [pair.client, pair.upstream] : [pair.upstream, pair.client];
    if (to === "up") stats.bytesUp += chunk.length;
    else stats.bytesDown += chunk.length;
    // Backpressure: a slow reader slows the writer, as a real network would.
    if (!dest.write(chunk)) {
      from.pause();
      dest.once("drain", () => from.resume());
    }
  };
  const end = (pair: Pair, to: "up" | "down"): void => {
    if (mode === "blackhole") {
      pair.heldEnd[to] = true;
      return;
    }
    (to === "up" ? pair.upstream : pair.client).end();
  };

  const connect = (client: net.Socket): void => {
    stats.accepted++;
    if (mode === "refuse" || mode === "reset") {
      if (mode === "refuse") stats.refused++;
      stats.reset++;
      rst(client);
      return;
    }
    const upstream = net.connect({ host: target.host, port: target.port });
    const pair: Pair = { client, upstream, held: [], heldEnd: { up: false, down: false } };
    pairs.add(pair);
    stats.open++;
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    // Either side failing takes the other down the same way: a reset stays a reset.
    let closed = false;
    const teardown = (hadError: boolean): void => {
      if (closed) return;
      closed = true;
      stats.open--;
      pairs.delete(pair);
      if (hadError) {
        rst(client);
        rst(upstream);
      } else {
        client.destroy();
        upstream.destroy();
      }
    };
    client.on("error", () => teardown(true));
    upstream.on("error", () => teardown(true));
    client.on("close", (hadError) => teardown(hadError));
    upstream.on("close", (hadError) => teardown(hadError));
    // Until the target answers, the client's bytes wait in its socket (a stream reads nothing without a listener).
    upstream.once("connect", () => {
      client.on("data", (chunk: Buffer) => forward(pair, "up", chunk));
      upstream.on("data", (chunk: Buffer) => forward(pair, "down", chunk));
      client.on("end", () => end(pair, "up"));
      upstream.on("end", () => end(pair, "down"));
    });
  };

  const server = net.createServer({ allowHalfOpen: true }, connect);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as net.AddressInfo;

  const endBlackhole = (): void => {
    for (const pair of [...pairs]) {
      const { held, heldEnd } = pair;
      pair.held = [];
      pair.heldEnd = { up: false, down: false };
      if (held.length === 0 && !heldEnd.up && !heldEnd.down) continue;
      if (blackholeEnd === "reset") {
        resetPair(pair);
        continue;
      }
      for (const { to, chunk } of held) forward(pair, to, chunk);
      if (heldEnd.up) end(pair, "up");
      if (heldEnd.down) end(pair, "down");
    }
  };
  const setMode = (next: TcpMode, forMs?: number): void => {
    clearTimeout(timer);
    timer = undefined;
    const leaving = mode;
    mode = next;
    if (leaving === "blackhole" && next !== "blackhole") endBlackhole();
    if (forMs !== undefined && next !== "pass") {
      timer = setTimeout(() => setMode("pass"), forMs);
      timer.unref();
    }
  };

  return {
    host: "127.0.0.1",
    port,
    get mode() {
      return mode;
    },
    reset(options = {}) {
      const open = [...pairs];
      // Leaving a blackhole for a reset: what it held is lost with the connections.
      for (const pair of open) pair.held = [];
      open.forEach(resetPair);
      setMode(options.forMs ? "reset" : "pass", options.forMs);
      return open.length;
    },
    blackhole(options = {}) {
      blackholeEnd = options.end ?? "deliver";
      setMode("blackhole", options.forMs);
    },
    refuse(options = {}) {
      setMode("refuse", options.forMs);
    },
    clear() {
      setMode("pass");
    },
    stats: () => ({ ...stats }),
    async close() {
      clearTimeout(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
      await closed;
    },
  };
}
