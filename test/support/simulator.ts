// Thin fetch helpers for the remote services simulator, so tests read like the HTTP calls they make.
import {
  startSimulator,
  type LedgerEntry,
  type Simulator,
  type SimulatorOptions,
} from "../../tools/simulator";

export interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export function startTestSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ port: 0, ...opts });
}

/** POST a JSON body (or raw text) with an optional Idempotency-Key. */
export async function post(
  url: string,
  body: unknown,
  key?: string,
  init: { raw?: boolean; signal?: AbortSignal } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== undefined) headers["idempotency-key"] = key;
  const res = await fetch(url, {
    method: "POST",
    headers,
    body: init.raw ? String(body) : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  return reply(res);
}

export async function call(url: string, method: string): Promise<Reply> {
  return reply(await fetch(url, { method }));
}

export async function ledger(sim: Simulator): Promise<LedgerEntry[]> {
  const res = await call(`${sim.url}/_ledger`, "GET");
  return res.body.entries as LedgerEntry[];
}

async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: res.headers,
  };
}
