/**
 * What the SDK calls of one order cost the caller's CPU, each measured alone: the floor under the app's CPU per
 * order that no change to the app's own code can go below while an order makes the same calls. The calls run in
 * a child process (sdkCostClient.ts), against the emulators and an HTTP endpoint in this one, so the child's CPU
 * is the caller's side only; an HTTP request the app serves itself (the front door, and on the devhost the
 * durable API its durable client calls) is measured on the serving side too. Each call's cost times the calls an
 * order made in the end-to-end run (its order profile) gives the floor; what the app's process spends above it
 * is the durable engine, the host, the app's own code and the garbage collector.
 */
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { startLocalStack } from "../tools/localStack";
import type { OrderProfile } from "./orderProfile";
import { CONCURRENCY, type ClientReply, type ClientRequest, type MeasuredOperation } from "./sdkCostClient";

/** Calls per order of each measured operation, and of HTTP requests the app's process serves. */
export type CallsPerOrder = Record<MeasuredOperation | "httpServed", number>;

/** What an order of the end-to-end run called, from its order profile. */
export function callsPerOrder(profile: OrderProfile): CallsPerOrder {
  const store = (operation: string) =>
    profile.store.filter((s) => s.operation === operation).reduce((sum, s) => sum + s.perOrder, 0);
  // In a run without faults each agent execution makes one remote call.
  const remoteCalls = Object.entries(profile.functions.executionsByFunctionPerOrder)
    .filter(([name]) => name.endsWith("Agent"))
    .reduce((sum, [, n]) => sum + n, 0);
  const durableCalls = profile.durable.instancesPerOrder + profile.durable.eventsRaisedPerOrder;
  return {
    busSend: profile.bus.sentPerOrder,
    busReceiveComplete: profile.bus.deliveriesPerOrder,
    storeCreate: store("create"),
    storeReplace: store("replace"),
    storePointRead: store("pointRead"),
    storeQuery: store("query"),
    fetchCall: remoteCalls,
    durableClientCall: durableCalls,
    // The front door's POST per order, and the durable API's side of each durable client call.
    httpServed: 1 + durableCalls,
  };
}

const OPERATIONS: MeasuredOperation[] = [
  "busSend",
  "busReceiveComplete",
  "storeCreate",
  "storeReplace",
  "storePointRead",
  "storeQuery",
  "fetchCall",
  "durableClientCall",
];

/** The longest one measurement may take (4,500 calls at a few ms each, on a slow machine); then it fails. */
const ANSWER_TIMEOUT_MS = 120_000;

class Client {
  readonly #child: ChildProcess;
  readonly #replies: ClientReply[] = [];
  readonly #waiting: Array<(reply: ClientReply) => void> = [];

  constructor() {
    this.#child = fork(path.join(__dirname, "sdkCostClient.js"), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#child.on("message", (reply: ClientReply) => {
      const waiter = this.#waiting.shift();
      if (waiter) waiter(reply);
      else this.#replies.push(reply);
    });
  }

  async ask<K extends ClientReply["kind"]>(
    request: ClientRequest,
    expect: K,
  ): Promise<Extract<ClientReply, { kind: K }>> {
    this.#child.send(request);
    let timer: NodeJS.Timeout | undefined;
    const reply = await Promise.race([
      this.#replies.shift() ?? new Promise<ClientReply>((resolve) => this.#waiting.push(resolve)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`sdkCost client did not answer ${request.kind} within ${ANSWER_TIMEOUT_MS / 1000} s`),
            ),
          ANSWER_TIMEOUT_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    if (reply.kind === "failed") throw new Error(`sdkCost client: ${reply.error}`);
    if (reply.kind !== expect) throw new Error(`sdkCost client answered ${reply.kind}, expected ${expect}`);
    return reply as Extract<ClientReply, { kind: K }>;
  }

  stop(): void {
    if (this.#child.connected) this.#child.send({ kind: "stop" } satisfies ClientRequest);
    // A child stuck in a measurement does not read its stop: it must not outlive the benchmark.
    setTimeout(() => this.#child.kill("SIGKILL"), 5_000).unref();
  }
}

/** An endpoint that answers as the simulator and the durable API do: a small JSON body. */
async function answeringEndpoint(): Promise<{ url: string; close(): void }> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"status":"applied","reference":"sdkcost"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}

/** Calls the child's server `count` times, CONCURRENCY at a time, with a body like a durable API call's. */
async function callServer(url: string, count: number): Promise<void> {
  let next = 0;
  const body = JSON.stringify({ kind: "reply", stepIndex: 1, direction: "do", outcome: "succeeded" });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await response.text();
      }
    }),
  );
}

export interface SdkCostOptions {
  /** Measured calls per operation, after the warm-up. */
  calls: number;
  /** The end-to-end run's order profile: how many of each call an order made, and the sizes they carried. */
  profile: OrderProfile;
}

export async function benchSdkCost(options: SdkCostOptions): Promise<Record<string, number>> {
  const { profile, calls } = options;
  const perOrder = callsPerOrder(profile);
  const stack = await startLocalStack();
  const endpoint = await answeringEndpoint();
  const client = new Client();
  const cpuMsPerCall: Partial<CallsPerOrder> = {};
  try {
    const mean = (operation: string, container: string) =>
      profile.store.find((s) => s.operation === operation && s.container === container)?.meanDocumentBytes ??
      1_000;
    await client.ask(
      {
        kind: "setup",
        setup: {
          serviceBusConnectionString: stack.emulators.serviceBusConnectionString,
          cosmos: stack.cosmos,
          // Nobody receives from the sample submitter's status queue in a stack of the benchmark's own.
          queue: "status-demo",
          container: "state",
          messageBytes: profile.bus.meanMessageBytes,
          stateDocumentBytes: mean("replace", "state"),
          createdDocumentBytes: mean("create", "state"),
          httpTarget: endpoint.url,
        },
      },
      "ready",
    );
    // busSend first: it fills the queue busReceiveComplete takes from (each receive a message sent here).
    for (const operation of OPERATIONS) {
      const { cpuMsPerCall: ms } = await client.ask({ kind: "measure", operation, calls }, "measured");
      cpuMsPerCall[operation] = ms;
      process.stdout.write(`  ${operation}: ${ms.toFixed(3)} ms of CPU per call\n`);
    }
    const { url } = await client.ask({ kind: "serve" }, "serving");
    await callServer(url, 500);
    await client.ask({ kind: "served" }, "served"); // the warm-up's, not counted
    await callServer(url, calls);
    cpuMsPerCall.httpServed = (await client.ask({ kind: "served" }, "served")).cpuMsPerRequest;
  } finally {
    client.stop();
    endpoint.close();
    await stack.stop();
  }
  const figures: Record<string, number> = {};
  let floor = 0;
  for (const [operation, n] of Object.entries(perOrder) as Array<[keyof CallsPerOrder, number]>) {
    const ms = cpuMsPerCall[operation] ?? NaN;
    figures[`${operation}.cpuMsPerCall`] = round(ms, 3);
    figures[`${operation}.callsPerOrder`] = round(n, 2);
    floor += ms * n;
  }
  figures.floorCpuMsPerOrder = round(floor, 1);
  const app = profile.functions.appCpuMsPerOrder;
  figures.appCpuMsPerOrder = round(app, 1);
  figures.aboveFloorCpuMsPerOrder = round(app - floor, 1);
  figures.floorShareOfAppCpu = round(floor / app, 2);
  return figures;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));
