// The emulator's gateway on the wire: requests shaped as the .NET and Python SDKs send them (no
// cross-partition header on point reads, query plan requests, the partition key as a header), answered as Cosmos
// DB answers them. The stand-in does not check auth, so plain fetch is enough. The SDKs themselves are exercised
// by test/conformance/.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestCosmos, TEST_DATABASE, type TestCosmos } from "../../support/cosmos";

let cosmos: TestCosmos;
const docs = `/dbs/${TEST_DATABASE}/colls/orders/docs`;

beforeAll(async () => {
  cosmos = await startTestCosmos();
  const orders = cosmos.container("orders");
  await Promise.all(
    [
      { id: "g-1", orderId: "G-A", n: 1 },
      { id: "g-2", orderId: "G-A", n: 2 },
      { id: "g-3", orderId: "G-B", n: 3 },
    ].map((d) => orders.items.create(d)),
  );
});
afterAll(async () => {
  await cosmos?.stop();
});

async function call(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const response = await fetch(`${cosmos.emulator.endpoint}${path}`, {
    method: init.method ?? "GET",
    headers: init.headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as Record<string, unknown>,
  };
}

const query = (body: unknown, headers: Record<string, string>) =>
  call(docs, {
    method: "POST",
    headers: { "content-type": "application/query+json", "x-ms-documentdb-isquery": "True", ...headers },
    body,
  });

describe("the Cosmos emulator gateway", () => {
  it("advertises the endpoint the client used, over http, in the account's regions", async () => {
    const { status, json, headers } = await call("/");
    expect(status).toBe(200);
    const endpoints = ["writableLocations", "readableLocations"].flatMap((field) =>
      (json[field] as { databaseAccountEndpoint: string }[]).map((l) => l.databaseAccountEndpoint),
    );
    expect(endpoints).toEqual([`${cosmos.emulator.endpoint}/`, `${cosmos.emulator.endpoint}/`]);
    expect(headers.get("content-location")).toBe(`${cosmos.emulator.endpoint}/`);
  });

  it("names every response's location over http, whether the server answers it directly or translated", async () => {
    // A point read and a write go to the server's own listener; a container creation is translated.
    const read = await call(`${docs}/g-1`, { headers: { "x-ms-documentdb-partitionkey": '["G-A"]' } });
    expect(read.headers.get("content-location")).toBe(`${cosmos.emulator.endpoint}${docs}/g-1`);
    const written = await call(docs, {
      method: "POST",
      headers: { "x-ms-documentdb-partitionkey": '["G-C"]', "x-ms-documentdb-is-upsert": "True" },
      body: { id: "g-4", orderId: "G-C", n: 4 },
    });
    expect(written.status).toBe(201);
    expect(written.headers.get("content-location")).toBe(`${cosmos.emulator.endpoint}${docs}`);
    const created = await call(`/dbs/${TEST_DATABASE}/colls`, {
      method: "POST",
      body: { id: "located", partitionKey: { paths: ["/tenant"] } },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("content-location")).toBe(
      `${cosmos.emulator.endpoint}/dbs/${TEST_DATABASE}/colls`,
    );
  });

  it("answers a point read of a missing item with 404 when only the partition key header is sent", async () => {
    const missing = await call(`${docs}/no-such-item`, {
      headers: { "x-ms-documentdb-partitionkey": '["G-A"]' },
    });
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe("NotFound");
    const found = await call(`${docs}/g-1`, { headers: { "x-ms-documentdb-partitionkey": '["G-A"]' } });
    expect(found.status).toBe(200);
    expect(found.json.n).toBe(1);
  });

  it("stores a container created without a partition key kind as kind Hash", async () => {
    const created = await call(`/dbs/${TEST_DATABASE}/colls`, {
      method: "POST",
      body: { id: "no-kind", partitionKey: { paths: ["/tenant"] } },
    });
    expect(created.status).toBe(201);
    const read = await call(`/dbs/${TEST_DATABASE}/colls/no-kind`);
    expect(read.json.partitionKey).toEqual({ paths: ["/tenant"], kind: "Hash" });
  });

  it("answers a query plan request with one range covering every key and nothing left to the client", async () => {
    const plan = await query(
      { query: "SELECT TOP 2 * FROM c ORDER BY c.n" },
      { "x-ms-cosmos-is-query-plan-request": "True", "x-ms-cosmos-supported-query-features": "OrderBy, Top" },
    );
    expect(plan.status).toBe(200);
    expect(plan.json).toMatchObject({
      partitionedQueryExecutionInfoVersion: 2,
      queryInfo: { orderBy: [], top: null, aggregates: [], hasSelectValue: false, rewrittenQuery: "" },
      queryRanges: [{ min: "", max: "FF", isMinInclusive: true, isMaxInclusive: false }],
    });
    const value = await query(
      { query: "SELECT VALUE COUNT(1) FROM c" },
      { "x-ms-cosmos-is-query-plan-request": "True" },
    );
    expect((value.json.queryInfo as { hasSelectValue: boolean }).hasSelectValue).toBe(true);

    const invalid = await query({ query: "SELEC * FROM c" }, { "x-ms-cosmos-is-query-plan-request": "True" });
    expect(invalid.status).toBe(400);
    expect(invalid.json.code).toBe("BadRequest");
  });

  it("scopes a query that names its partition in the header only, and keeps its own parameters", async () => {
    const scoped = await query(
      {
        query: "SELECT c.id FROM c WHERE c.n >= @min ORDER BY c.n",
        parameters: [{ name: "@min", value: 2 }],
      },
      { "x-ms-documentdb-partitionkey": '["G-A"]' },
    );
    expect(scoped.status).toBe(200);
    expect(scoped.json.Documents).toEqual([{ id: "g-2" }]);
  });

  it("refuses a query it cannot scope to the header's partition key instead of returning other partitions", async () => {
    const refused = await query(
      { query: "SELECT * FROM c IN c.items" },
      { "x-ms-documentdb-partitionkey": '["G-A"]' },
    );
    expect(refused.status).toBe(400);
    expect(String(refused.json.message)).toContain("sub-array");
  });
});
