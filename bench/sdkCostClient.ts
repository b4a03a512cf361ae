/**
 * The child process of the sdkCost benchmark (sdkCost.ts): the SDK calls an order makes, each alone, with this
 * process's CPU time measured around them. It runs apart from the emulators so that its CPU is the caller's
 * only, as the app's is. The parent asks for one operation at a time over the IPC channel and gets the CPU
 * milliseconds one call cost here, after a warm-up (the JIT), sixteen calls at a time as the app makes them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CosmosClient, type Container } from "@azure/cosmos";
import { ServiceBusClient } from "@azure/service-bus";

export interface ClientSetup {
  serviceBusConnectionString: string;
  cosmos: { endpoint: string; key: string; database: string };
  /** A queue nobody else receives from during the run. */
  queue: string;
  /** A container the benchmark may write test documents into; they carry the id prefix below. */
  container: string;
  /** Mean sizes measured in the end-to-end run, so that each call carries what the app's carry. */
  messageBytes: number;
  stateDocumentBytes: number;
  createdDocumentBytes: number;
  /** An HTTP endpoint in the parent, for the calls whose server side must not be counted here. */
  httpTarget: string;
}

export type ClientRequest =
  | { kind: "setup"; setup: ClientSetup }
  | { kind: "measure"; operation: MeasuredOperation; calls: number }
  /** Starts an HTTP server here; the parent then calls it, and each `served` reports this side's CPU since. */
  | { kind: "serve" }
  | { kind: "served" }
  | { kind: "stop" };

export type MeasuredOperation =
  | "busSend"
  | "busReceiveComplete"
  | "storeCreate"
  | "storeReplace"
  | "storePointRead"
  | "storeQuery"
  | "fetchCall"
  | "durableClientCall";

export type ClientReply =
  | { kind: "ready" }
  | { kind: "measured"; operation: MeasuredOperation; cpuMsPerCall: number }
  | { kind: "serving"; url: string }
  | { kind: "served"; cpuMsPerRequest: number; requests: number }
  | { kind: "failed"; error: string };

/** Calls in flight at once, as the app makes them (host.json: 16 handlers at a time per trigger). */
export const CONCURRENCY = 16;
const WARM_UP_CALLS = 500;
const ID_PREFIX = "sdkcost-";

const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** Makes `count` calls, CONCURRENCY at a time; `worker` says which of them makes a call (one at a time each). */
async function inParallel(count: number, call: (worker: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next++ < count) await call(worker);
    }),
  );
}

/** A JSON document of about `bytes` bytes, shaped like a state record (a history of entries). */
function documentOf(id: string, bytes: number): Record<string, unknown> {
  const entry = {
    at: new Date().toISOString(),
    event: "stepSucceeded",
    from: "Processing",
    to: "Processing",
  };
  const history: unknown[] = [];
  const doc: Record<string, unknown> = { id, orderId: id, processState: "Processing", history };
  while (JSON.stringify(doc).length < bytes) history.push({ ...entry, detail: `step ${history.length}` });
  return doc;
}

class Measurer {
  readonly #setup: ClientSetup;
  readonly #bus: ServiceBusClient;
  readonly #sender;
  readonly #container: Container;
  readonly #axios: { post(url: string, body: unknown): Promise<unknown> };
  #created = 0;
  #server: http.Server | undefined;
  #served = 0;
  #servedFromCpu = 0;

  constructor(setup: ClientSetup) {
    this.#setup = setup;
    this.#bus = new ServiceBusClient(setup.serviceBusConnectionString);
    this.#sender = this.#bus.createSender(setup.queue);
    this.#container = new CosmosClient({ endpoint: setup.cosmos.endpoint, key: setup.cosmos.key })
      .database(setup.cosmos.database)
      .container(setup.container);
    // The very axios the durable client calls the host's durable API with (durable-functions depends on it).
    const axiosPath = require.resolve("axios", { paths: [require.resolve("durable-functions")] });
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- resolved through durable-functions
    this.#axios = require(axiosPath) as { post(url: string, body: unknown): Promise<unknown> };
  }

  async measure(operation: MeasuredOperation, calls: number): Promise<number> {
    const call = await this.#prepare(operation);
    await inParallel(WARM_UP_CALLS, call);
    const before = cpuMs();
    await inParallel(calls, call);
    return (cpuMs() - before) / calls;
  }

  /** The call to measure; each worker replaces and reads a document of its own, so no replace meets a 412. */
  async #prepare(operation: MeasuredOperation): Promise<(worker: number) => Promise<unknown>> {
    const { messageBytes, stateDocumentBytes, createdDocumentBytes } = this.#setup;
    switch (operation) {
      case "busSend": {
        const body = Buffer.from(JSON.stringify({ pad: "x".repeat(Math.max(0, messageBytes - 12)) }));
        return () => this.#sender.sendMessages({ body, contentType: "application/json" });
      }
      case "busReceiveComplete":
        return () => this.#receiveAndComplete();
      case "storeCreate":
        return () =>
          this.#container.items.create(documentOf(`${ID_PREFIX}${this.#created++}`, createdDocumentBytes));
      case "storeReplace": {
        const docs = await this.#documents(stateDocumentBytes);
        return async (worker) => {
          const doc = docs[worker]!;
          const { resource } = await this.#container
            .item(doc.id as string, doc.id as string)
            .replace(doc.body, { accessCondition: { type: "IfMatch", condition: doc.etag } });
          doc.etag = resource!._etag;
        };
      }
      case "storePointRead": {
        const docs = await this.#documents(stateDocumentBytes);
        return (worker) => this.#container.item(docs[worker]!.id, docs[worker]!.id).read();
      }
      case "storeQuery": {
        // A cross-partition query with a filter, as the claim rounds' page is: the SDK asks for a plan first.
        const query = {
          query: "SELECT TOP 4 * FROM c WHERE STARTSWITH(c.id, @prefix) AND c.processState = @state",
          parameters: [
            { name: "@prefix", value: ID_PREFIX },
            { name: "@state", value: "Processing" },
          ],
        };
        await this.#documents(stateDocumentBytes);
        return () => this.#container.items.query(query).fetchAll();
      }
      case "fetchCall":
      case "durableClientCall": {
        const url = this.#setup.httpTarget;
        const body = {
          orderId: "SDKCOST-1",
          step: "chargePayment",
          idempotencyKey: "SDKCOST-1:chargePayment:do",
        };
        return operation === "fetchCall"
          ? async () => {
              const response = await fetch(url, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify(body),
              });
              await response.text();
            }
          : () => this.#axios.post(url, body);
      }
    }
  }

  #replaceDocs: Array<{ id: string; body: Record<string, unknown>; etag: string }> | undefined;

  async #documents(bytes: number) {
    if (!this.#replaceDocs) {
      this.#replaceDocs = [];
      for (let k = 0; k < CONCURRENCY; k++) {
        const body = documentOf(`${ID_PREFIX}replace-${k}`, bytes);
        const { resource } = await this.#container.items.upsert(body);
        this.#replaceDocs.push({ id: body.id as string, body, etag: resource!._etag });
      }
    }
    return this.#replaceDocs;
  }

  /** Receives are measured as the trigger makes them: a streaming receiver, each message completed. */
  #receiving: { next(): Promise<void> } | undefined;

  async #receiveAndComplete(): Promise<void> {
    if (!this.#receiving) {
      const receiver = this.#bus.createReceiver(this.#setup.queue, {
        receiveMode: "peekLock",
        skipParsingBodyAsJson: true,
      });
      const waiting: Array<() => void> = [];
      let completed = 0;
      receiver.subscribe(
        {
          processMessage: async (message) => {
            await receiver.completeMessage(message);
            const waiter = waiting.shift();
            if (waiter) waiter();
            else completed++;
          },
          processError: async () => undefined,
        },
        { maxConcurrentCalls: CONCURRENCY, autoCompleteMessages: false },
      );
      this.#receiving = {
        next: () =>
          new Promise<void>((resolve) => {
            if (completed > 0) {
              completed--;
              resolve();
            } else waiting.push(resolve);
          }),
      };
    }
    await this.#receiving.next();
  }

  async serve(): Promise<string> {
    this.#server = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        this.#served++;
        response.writeHead(202, { "content-type": "application/json" });
        response.end(JSON.stringify({ accepted: body.length }));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.#served = 0;
    this.#servedFromCpu = cpuMs();
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/`;
  }

  /** The CPU per request served since `serve` or the last `served`, which starts the count again. */
  served(): { cpuMsPerRequest: number; requests: number } {
    const requests = this.#served;
    const now = cpuMs();
    const cpu = now - this.#servedFromCpu;
    this.#served = 0;
    this.#servedFromCpu = now;
    return { cpuMsPerRequest: requests > 0 ? cpu / requests : NaN, requests };
  }

  async close(): Promise<void> {
    this.#server?.close();
    await this.#sender.close().catch(() => undefined);
    await this.#bus.close().catch(() => undefined);
  }
}

let measurer: Measurer | undefined;

const send = (reply: ClientReply): void => {
  process.send?.(reply);
};

// Only as the forked child: sdkCost.ts imports this module for its types and CONCURRENCY.
if (require.main === module)
  process.on("message", (request: ClientRequest) => {
    void (async () => {
      try {
        switch (request.kind) {
          case "setup":
            measurer = new Measurer(request.setup);
            send({ kind: "ready" });
            break;
          case "measure":
            send({
              kind: "measured",
              operation: request.operation,
              cpuMsPerCall: await measurer!.measure(request.operation, request.calls),
            });
            break;
          case "serve":
            send({ kind: "serving", url: await measurer!.serve() });
            break;
          case "served":
            send({ kind: "served", ...measurer!.served() });
            break;
          case "stop":
            await measurer?.close();
            process.exit(0);
        }
      } catch (error) {
        send({
          kind: "failed",
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
    })();
  });
