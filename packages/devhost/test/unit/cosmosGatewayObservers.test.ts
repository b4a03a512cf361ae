// The Cosmos gateway's observers: what a benchmark sees of each request and of the response it got. The
// server behind the gateway is a plain http listener here, so that what it writes (and so what the client
// receives) is known to the byte; the translator sends GETs straight to it and answers POSTs itself.
import http, { type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  createGateway,
  type GatewayObservers,
  type ServedResponse,
  type Translator,
} from "../../src/emulators/cosmos/gateway";

const translator: Translator = {
  direct: (head) => (head.method === "GET" ? head.headers : undefined),
  translate: (request) =>
    Promise.resolve({
      status: 201,
      headers: { "content-type": "application/json", "x-ms-item-count": "2" },
      body: Buffer.from(JSON.stringify({ echoed: request.body.toString() })),
    }),
  responseHeader: (name, value) => (name === "x-renamed" ? `seen:${String(value)}` : value),
};

/** The server behind the gateway: a reply in two writes, one of them not ASCII, so bytes ≠ characters. */
function backendServer(): Server {
  return http.createServer((req, res) => {
    res.statusCode = req.url === "/missing" ? 404 : 200;
    res.setHeader("x-renamed", "direct");
    res.write('{"name":"');
    res.end('café"}');
  });
}

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const step of cleanup) step();
  cleanup = [];
});

async function startGateway(observers: GatewayObservers): Promise<string> {
  const backend = backendServer();
  await listen(backend);
  const gateway = createGateway(backend, translator, observers);
  const port = await listen(gateway.server);
  cleanup.push(() => {
    gateway.dispose();
    gateway.server.closeAllConnections();
    gateway.server.close();
    backend.close();
  });
  return `http://127.0.0.1:${port}`;
}

/** Waits for the observer: "finish" fires on the server side, possibly after the client has its answer. */
async function answered(seen: unknown[], count: number): Promise<void> {
  for (let i = 0; i < 100 && seen.length < count; i++) await new Promise((r) => setTimeout(r, 10));
}

describe("the Cosmos gateway's observers", () => {
  it("report a direct reply's status, translated headers and body bytes as the client received them", async () => {
    const seen: Array<{ url: string | undefined; response: ServedResponse }> = [];
    const url = await startGateway({
      onResponse: (request, response) => seen.push({ url: request.url, response }),
    });
    const reply = await fetch(`${url}/dbs/d/colls/c/docs/x`);
    const body = Buffer.from(await reply.arrayBuffer());
    await answered(seen, 1);

    expect(body.toString()).toBe('{"name":"café"}');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe("/dbs/d/colls/c/docs/x");
    expect(seen[0]!.response.status).toBe(200);
    // 16 bytes for 15 characters: the é is two bytes in UTF-8.
    expect(seen[0]!.response.bodyBytes).toBe(body.length);
    expect(seen[0]!.response.bodyBytes).toBe(16);
    expect(seen[0]!.response.body()).toEqual(body);
    expect(seen[0]!.response.headers["x-renamed"]).toBe("seen:direct");
  });

  it("report a translated reply the same way, its headers included", async () => {
    const seen: ServedResponse[] = [];
    const url = await startGateway({ onResponse: (_request, response) => seen.push(response) });
    const reply = await fetch(`${url}/dbs/d/colls/c/docs`, { method: "POST", body: "abc" });
    const body = Buffer.from(await reply.arrayBuffer());
    await answered(seen, 1);

    expect(reply.status).toBe(201);
    expect(body.toString()).toBe('{"echoed":"abc"}');
    expect(seen).toEqual([
      {
        status: 201,
        bodyBytes: body.length,
        headers: expect.objectContaining({ "x-ms-item-count": "2", "content-length": body.length }),
        body: expect.any(Function),
      },
    ]);
    expect(seen[0]!.body().toString()).toBe('{"echoed":"abc"}');
  });

  it("see each request on arrival and again once answered, errors included", async () => {
    const events: string[] = [];
    const url = await startGateway({
      onRequest: (request: IncomingMessage) => events.push(`request ${request.url}`),
      onResponse: (request, response) => events.push(`response ${request.url} ${response.status}`),
    });
    await (await fetch(`${url}/missing`)).arrayBuffer();
    await answered(events, 2);
    expect(events).toEqual(["request /missing", "response /missing 404"]);
  });

  it("leave the answer unchanged without observers", async () => {
    const url = await startGateway({});
    const reply = await fetch(`${url}/dbs/d/colls/c/docs/x`);
    expect(reply.headers.get("x-renamed")).toBe("seen:direct");
    expect(await reply.text()).toBe('{"name":"café"}');
  });
});
