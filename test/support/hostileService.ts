/**
 * A stand-in for a remote service that answers whatever a test tells it to: an HTML page, a redirect, 64 MiB, a
 * trickle, a 429. It records every request it received and, for each answer, how many bytes it wrote before the
 * connection closed, so a test can tell what the client asked for and how much of the answer it took.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  /** performance.now() when the request's body had arrived. */
  at: number;
}

/** What became of one answer: the bytes of body written and whether the client hung up before its end. */
export interface AnswerWritten {
  bytes: number;
  finished: boolean;
  closedEarly: boolean;
}

/** Answers one request, writing its body through `write`, which counts what it writes. */
export type Answer = (
  req: ReceivedRequest,
  res: ServerResponse,
  write: (chunk: Buffer | string) => boolean,
) => void | Promise<void>;

export interface HostileService {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  /** Every request received, oldest first. */
  requests: ReceivedRequest[];
  /** One per answer begun, in the order of the requests. */
  answers: AnswerWritten[];
  /** What the next requests are answered with, until told otherwise (default: a 500). */
  answerWith(answer: Answer): void;
  /** Resolves once every answer begun has ended (written whole or cut by the client). */
  settled(): Promise<void>;
  reset(): void;
  stop(): Promise<void>;
}

/** An answer of `status` with a JSON body. */
export const jsonAnswer =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_req, res, write) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", ...headers });
    write(text);
    res.end();
  };

/** An answer of `status` with `body` as given, under `headers`. */
export const rawAnswer =
  (status: number, headers: Record<string, string>, body = ""): Answer =>
  (_req, res, write) => {
    res.writeHead(status, headers);
    if (body) write(body);
    res.end();
  };

/**
 * `total` bytes of a JSON-looking body, written as fast as the client takes them (backpressure), without a
 * content-length unless `declare` says so.
 */
export const hugeAnswer =
  (total: number, declare = false): Answer =>
  (_req, res, write) => {
    res.writeHead(200, {
      "content-type": "application/json",
      ...(declare ? { "content-length": String(total) } : {}),
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < total && !res.destroyed) {
        sent += chunk.length;
        if (!write(chunk)) {
          res.once("drain", pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  };

export async function startHostileService(): Promise<HostileService> {
  let answer: Answer = jsonAnswer(500, { code: "NotTold", message: "no answer set" });
  const requests: ReceivedRequest[] = [];
  const answers: AnswerWritten[] = [];
  const pending = new Set<Promise<void>>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: performance.now(),
      };
      requests.push(received);
      const written: AnswerWritten = { bytes: 0, finished: false, closedEarly: false };
      answers.push(written);
      const ended = new Promise<void>((resolve) => {
        res.on("finish", () => {
          written.finished = true;
        });
        res.on("close", () => {
          written.closedEarly = !written.finished;
          resolve();
        });
      });
      pending.add(ended);
      void ended.then(() => pending.delete(ended));
      const write = (chunk: Buffer | string): boolean => {
        written.bytes += Buffer.byteLength(chunk);
        return res.write(chunk);
      };
      void Promise.resolve(answer(received, res, write)).catch(() => res.destroy());
    });
  });
  const address = await new Promise<AddressInfo>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(server.address() as AddressInfo)),
  );
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    answers,
    answerWith: (next) => {
      answer = next;
    },
    settled: async () => {
      await Promise.all([...pending]);
    },
    reset: () => {
      requests.length = 0;
      answers.length = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
