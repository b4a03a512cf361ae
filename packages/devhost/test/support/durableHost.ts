// A durable engine for tests: temp task hub, virtual clock by default, the captured registrations, and
// optionally the durable HTTP API on 127.0.0.1:0 (at both of its paths) so df.getClient can talk to it.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import {
  DURABLE_HTTP_PATHS,
  DurableEngine,
  VirtualClock,
  type Clock,
  type DurableEngineOptions,
  type DurableFunctionRegistration,
} from "../../src/durable";
import { durableRegistrations } from "./durableCapture";

export const T0 = new Date("2024-01-01T00:00:00.000Z");

export interface TestEngine {
  engine: DurableEngine;
  /** The engine's virtual clock (throws if the engine runs on another clock). */
  readonly clock: VirtualClock;
  dataDir: string;
  /** Origin of the HTTP server when `http` was requested, e.g. http://127.0.0.1:39123 */
  baseUrl: string;
  /** A durable client built by the SDK's own getClient, pointed at this engine. */
  client(): df.DurableClient;
  /** Stops the engine and server; keeps the data directory (for restart tests). */
  stop(): Promise<void>;
  /** stop() and delete the data directory. */
  dispose(): Promise<void>;
}

export interface TestEngineOptions extends Partial<DurableEngineOptions> {
  http?: boolean;
  registrations?: DurableFunctionRegistration[];
}

export function tempDataDir(prefix = "durable-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startTestEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  const clock: Clock = options.clock ?? new VirtualClock(T0);
  const dataDir = options.dataDir ?? tempDataDir();
  const engine = new DurableEngine({ ...options, dataDir, clock });
  for (const reg of options.registrations ?? durableRegistrations()) engine.register(reg);
  await engine.start();
  let server: http.Server | undefined;
  let baseUrl = "";
  if (options.http) {
    server = http.createServer((req, res) => {
      const url = req.url ?? "/";
      const mount = DURABLE_HTTP_PATHS.find((p) => url.toLowerCase().startsWith(p));
      if (mount) void engine.handleRpc(req, res, url.slice(mount.length));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const stop = async (): Promise<void> => {
    await engine.stop();
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
      server = undefined;
    }
  };
  return {
    engine,
    get clock(): VirtualClock {
      if (!(clock instanceof VirtualClock)) throw new Error("this test engine runs on a real clock");
      return clock;
    },
    dataDir,
    baseUrl,
    client: () => clientFor(engine.clientBindingData(baseUrl)),
    stop,
    dispose: async () => {
      await stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What a client function sees: an InvocationContext whose durableClient input holds `clientData`. */
export function clientFor(clientData: unknown): df.DurableClient {
  const binding = df.input.durableClient();
  const context = new InvocationContext({ options: { extraInputs: [binding] }, logHandler: () => {} });
  context.extraInputs.set(binding, clientData);
  return df.getClient(context);
}
