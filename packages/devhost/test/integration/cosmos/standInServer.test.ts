// The emulator's own server (standInServer.ts: the package's routes and handlers in a listener of this package,
// with the document queries and read feeds on queryEngine.ts) against the package's createHttpServer: the same
// requests, over HTTP, get the same status, body and paging headers from both, errors included.
import http, { type OutgoingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "@vercel/cosmosdb-server";
import { createStandInServer } from "../../../src/emulators/cosmos/standInServer";

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: unknown;
}

/** The headers that carry meaning here; the activity id is random and Content-Location names the port. */
const COMPARED_HEADERS = ["content-type", "x-ms-continuation", "x-ms-item-count", "x-ms-request-charge"];

/** A document's etag and timestamp differ from server to server; everything else must not. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === "_etag" ? "etag" : k === "_ts" ? 0 : normalized(v)]),
  );
}

function request(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: OutgoingHttpHeaders = {},
): Promise<Answer> {
  const payload = body === undefined ? "" : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: { ...headers, "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: Object.fromEntries(
              COMPARED_HEADERS.map((h) => [h, res.headers[h] as string | undefined]),
            ),
            body: text === "" ? text : normalized(JSON.parse(text)),
          });
        });
        res.once("error", reject);
      },
    );
    req.once("error", reject);
    req.end(payload);
  });
}

const QUERY_HEADERS = {
  "content-type": "application/query+json",
  "x-ms-documentdb-isquery": "True",
  "x-ms-documentdb-query-enablecrosspartition": "true",
};

let servers: Server[];
let ports: number[];

/** The same request to both servers: the package's first, then the emulator's. */
const both = (method: string, path: string, body?: unknown, headers?: OutgoingHttpHeaders) =>
  Promise.all(ports.map((port) => request(port, method, path, body, headers)));

/** Every page of a query or read feed on both servers, following each server's own continuation tokens. */
async function pagesOfBoth(
  method: string,
  path: string,
  body: unknown,
  headers: OutgoingHttpHeaders,
  maxItemCount: number,
): Promise<Answer[][]> {
  return Promise.all(
    ports.map(async (port) => {
      const pages: Answer[] = [];
      let continuation: string | undefined;
      do {
        const page = await request(port, method, path, body, {
          ...headers,
          "x-ms-max-item-count": String(maxItemCount),
          ...(continuation ? { "x-ms-continuation": continuation } : {}),
        });
        pages.push(page);
        continuation = page.headers["x-ms-continuation"];
      } while (continuation && pages.length < 100);
      return pages;
    }),
  );
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

beforeAll(async () => {
  servers = [createHttpServer({ keepAlive: true }), createStandInServer()];
  ports = await Promise.all(servers.map(listen));
  const setUp: [string, string, unknown][] = [
    ["POST", "/dbs", { id: "db" }],
    [
      "POST",
      "/dbs/db/colls",
      {
        id: "state",
        partitionKey: { paths: ["/orderId"], kind: "Hash" },
        indexingPolicy: {
          compositeIndexes: [
            [
              { path: "/processState", order: "ascending" },
              { path: "/createdAt", order: "ascending" },
            ],
          ],
        },
      },
    ],
    ["POST", "/dbs/db/colls/state/udfs", { id: "double", body: "function (v) { return v * 2; }" }],
  ];
  for (const [method, path, body] of setUp) {
    const answers = await both(method, path, body);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
  }
  const states = ["Pending", "Processing", "Processed"];
  for (let i = 0; i < 45; i++) {
    const orderId = `order-${i % 9}`;
    const document = {
      id: `doc-${i}`,
      orderId,
      processState: states[i % 3],
      createdAt: `2026-01-01T00:00:${String(i % 20).padStart(2, "0")}Z`,
      ...(i % 4 === 0 ? {} : { n: i % 7 }),
    };
    const answers = await both("POST", "/dbs/db/colls/state/docs", document, {
      "x-ms-documentdb-partitionkey": JSON.stringify([orderId]),
    });
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
  }
});

afterAll(async () => {
  await Promise.all(
    (servers ?? []).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
});

const DOCS = "/dbs/db/colls/state/docs";

describe("the emulator's server answers as the package's own", () => {
  it.each([
    ["SELECT * FROM c WHERE c.processState = 'Pending' ORDER BY c.processState ASC, c.createdAt ASC", []],
    [
      "SELECT * FROM c WHERE c.processState IN (@a, @b) AND c.n >= @min ORDER BY c.createdAt DESC",
      [
        { name: "@a", value: "Pending" },
        { name: "@b", value: "Processed" },
        { name: "@min", value: 2 },
      ],
    ],
    ["SELECT c.id, c.n FROM c WHERE c.orderId = 'order-3'", []],
    ["SELECT TOP 7 * FROM c ORDER BY c.createdAt", []],
    [
      "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(@s, c.processState)",
      [{ name: "@s", value: ["Pending"] }],
    ],
    ["SELECT VALUE udf.double(c.n) FROM c WHERE IS_NUMBER(c.n)", []],
  ])("pages %s", async (query, parameters) => {
    for (const maxItemCount of [4, 100]) {
      const [own, emulator] = await pagesOfBoth(
        "POST",
        DOCS,
        { query, parameters },
        QUERY_HEADERS,
        maxItemCount,
      );
      expect(emulator).toEqual(own);
      expect(own!.length).toBeGreaterThan(0);
    }
  });

  it("pages the read feed of a container, and answers 404 for a container that does not exist", async () => {
    const [own, emulator] = await pagesOfBoth("GET", DOCS, undefined, {}, 10);
    expect(emulator).toEqual(own);
    expect(own!.length).toBe(5);
    const missing = await both("GET", "/dbs/db/colls/none/docs");
    expect(missing[1]).toEqual(missing[0]);
    expect(missing[0]!.status).toBe(404);
  });

  it.each([
    ["a query that does not parse", { query: "SELECT * FORM c" }, QUERY_HEADERS, 400],
    ["no query", { parameters: [] }, QUERY_HEADERS, 400],
    [
      "a two-field ORDER BY no composite index serves",
      { query: "SELECT * FROM c ORDER BY c.n, c.id" },
      QUERY_HEADERS,
      400,
    ],
    ["a UDF that does not exist", { query: "SELECT VALUE udf.none(c) FROM c" }, QUERY_HEADERS, 400],
    [
      "a query across partitions without the header that allows it",
      { query: "SELECT * FROM c WHERE c.n = 1" },
      { ...QUERY_HEADERS, "x-ms-documentdb-query-enablecrosspartition": "false" },
      400,
    ],
    [
      "a query of one partition without that header",
      { query: "SELECT * FROM c WHERE c.orderId = 'order-1'" },
      { ...QUERY_HEADERS, "x-ms-documentdb-query-enablecrosspartition": "false" },
      200,
    ],
  ])("answers %s alike", async (_, body, headers, status) => {
    const [own, emulator] = await both("POST", DOCS, body, headers);
    expect(emulator).toEqual(own);
    expect(own!.status).toBe(status);
  });

  it("answers a query of a container or database that does not exist alike", async () => {
    for (const path of ["/dbs/db/colls/none/docs", "/dbs/none/colls/state/docs"]) {
      const [own, emulator] = await both("POST", path, { query: "SELECT * FROM c" }, QUERY_HEADERS);
      expect(emulator).toEqual(own);
      expect(own!.status).toBe(404);
    }
  });

  it("hands every other request to the package's handlers: point reads, replaces, deletes, change feed, no route", async () => {
    const pk = { "x-ms-documentdb-partitionkey": JSON.stringify(["order-2"]) };
    const requests: [string, string, unknown, OutgoingHttpHeaders][] = [
      ["GET", `${DOCS}/doc-2`, undefined, pk],
      ["GET", `${DOCS}/nothing`, undefined, { ...pk, "x-ms-documentdb-query-enablecrosspartition": "true" }],
      ["PUT", `${DOCS}/doc-2`, { id: "doc-2", orderId: "order-2", processState: "Error" }, pk],
      ["PUT", `${DOCS}/doc-2`, { id: "doc-2", orderId: "order-2" }, { ...pk, "if-match": "stale" }],
      [
        "DELETE",
        `${DOCS}/doc-11`,
        undefined,
        { "x-ms-documentdb-partitionkey": JSON.stringify(["order-2"]) },
      ],
      ["GET", DOCS, undefined, { "a-im": "Incremental feed", "if-none-match": "1" }],
      ["GET", "/dbs/db/colls/state", undefined, {}],
      ["GET", "/nowhere/at/all", undefined, {}],
    ];
    for (const [method, path, body, headers] of requests) {
      const [own, emulator] = await both(method, path, body, headers);
      expect(emulator, `${method} ${path}`).toEqual(own);
    }
  });
});
