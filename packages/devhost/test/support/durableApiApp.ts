// The durable API sample app (apps/durable-api-app) on the devhost, on virtual time, and HTTP calls made the
// way a user makes them: plain requests to the URLs the API hands out.
import fs from "node:fs";
import { VirtualClock } from "../../src/durable";
import { startTestDevHost, type TestDevHost } from "./devhost";
import type { ManagementUrls } from "../../src/durable/webhooks";

export const API_T0 = new Date("2024-05-01T08:00:00.000Z");

export interface ApiHost {
  host: TestDevHost;
  clock: VirtualClock;
  /** Waits until no durable work can run without moving the clock. */
  idle(): Promise<void>;
  /** Stops the devhost, keeping its data directory (for restarts). */
  stop(): Promise<void>;
  /** stop() and delete the data directory. */
  dispose(): Promise<void>;
}

export async function startApiHost(
  options: { dataDir?: string; clock?: VirtualClock } = {},
): Promise<ApiHost> {
  const clock = options.clock ?? new VirtualClock(API_T0);
  const host = await startTestDevHost("durable-api-app", {
    clock,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await host.stop();
  };
  return {
    host,
    clock,
    idle: () => host.engine.whenIdle(),
    stop,
    dispose: async () => {
      await stop();
      fs.rmSync(host.dataDir, { recursive: true, force: true });
    },
  };
}

export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** A request as curl would send it: a JSON body when given (and then a JSON content type). */
export async function call<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply<T>> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (text ? JSON.parse(text) : undefined) as T,
  };
}

/** The check-status payload of a start, as the quickstart's HTTP starter returns it. */
export type CheckStatus = ManagementUrls;

export interface Status {
  name: string;
  instanceId: string;
  runtimeStatus: string;
  input: unknown;
  output: unknown;
  customStatus: unknown;
  createdTime: string;
  lastUpdatedTime: string;
  historyEvents?: Array<Record<string, unknown> & { EventType: string }>;
}

/** Starts `orchestrator` through the app's HTTP starter and returns its check-status payload. */
export async function startThroughStarter(
  api: ApiHost,
  orchestrator: string,
  input?: unknown,
): Promise<CheckStatus> {
  const reply = await call<CheckStatus>("POST", `${api.host.url}/api/orchestrators/${orchestrator}`, input);
  if (reply.status !== 202)
    throw new Error(`the starter answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** A management URL with its placeholder filled in: {eventName} or {text}. */
export function fill(url: string, value: string): string {
  return url.replace("{eventName}", encodeURIComponent(value)).replace("{text}", encodeURIComponent(value));
}

/** `url` with the durable API's system key as its `code` query parameter. */
export function withKey(url: string, key: string): string {
  return `${url}${url.includes("?") ? "&" : "?"}code=${encodeURIComponent(key)}`;
}
