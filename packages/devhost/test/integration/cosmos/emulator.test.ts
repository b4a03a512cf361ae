// The Cosmos behaviours a store adapter relies on (conditional writes under races, paged queries), proven through
// the real @azure/cosmos client against the embedded stand-in, and the stand-in creating what its config
// declares. If one of these fails, an app's concurrency or paging contract cannot be tested locally any more.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CosmosConfigError,
  emulatorClient,
  loadCosmosConfig,
  startCosmosEmulator,
} from "../../../src/emulators/cosmos";
import { CosmosClient, type Container, type FeedOptions, type SqlQuerySpec } from "@azure/cosmos";
import {
  startTestCosmos,
  statusOf,
  tally,
  TEST_CONTAINERS,
  TEST_COSMOS_CONFIG,
  TEST_DATABASE,
  TEST_PARTITION_KEY_PATH,
  type TestCosmos,
} from "../../support/cosmos";

interface StateDoc {
  id: string;
  orderId: string;
  processState: string;
  completeBy: string;
  createdAt: string;
  writer?: number;
}

let cosmos: TestCosmos;
let state: Container;

beforeAll(async () => {
  cosmos = await startTestCosmos();
  state = cosmos.container("state");
});
afterAll(async () => {
  await cosmos?.stop();
});

describe("Cosmos emulator start-up", () => {
  it("serves plain http on loopback with an emulator connection string", () => {
    const { endpoint, port, connectionString, key } = cosmos.emulator;
    expect(endpoint).toBe(`http://127.0.0.1:${port}`);
    expect(port).toBeGreaterThan(0);
    expect(connectionString).toBe(`AccountEndpoint=http://127.0.0.1:${port}/;AccountKey=${key};`);
  });

  it("creates the configured database and containers, partitioned on /orderId, with the composite indexes", async () => {
    expect(cosmos.emulator.databases).toEqual([TEST_DATABASE]);
    const { resources } = await cosmos.client.database(TEST_DATABASE).containers.readAll().fetchAll();
    expect(resources.map((c) => c.id).sort()).toEqual([...TEST_CONTAINERS].sort());
    for (const c of resources) {
      expect(c.partitionKey?.paths).toEqual([TEST_PARTITION_KEY_PATH]);
      const composites = (c.indexingPolicy?.compositeIndexes ?? []).map((pair) =>
        pair.map((p) => `${p.path} ${p.order}`).join(", "),
      );
      expect(composites).toEqual([
        "/processState ascending, /createdAt ascending",
        "/processState ascending, /completeBy ascending",
        "/updatedAt descending, /id descending",
        "/processState ascending, /updatedAt descending, /id descending",
      ]);
    }
  });

  it("advertises its own http endpoint, so a client built from the connection string with defaults works", async () => {
    const client = new CosmosClient(cosmos.emulator.connectionString);
    try {
      const account = await client.getDatabaseAccount();
      expect(account.resource?.writableLocations.map((l) => l.databaseAccountEndpoint)).toEqual([
        `${cosmos.emulator.endpoint}/`,
      ]);
      const { resources } = await client.databases.readAll().fetchAll();
      expect(resources.map((d) => d.id)).toEqual([TEST_DATABASE]);
    } finally {
      client.dispose();
    }
  });

  it("reports the partition key kind Hash for a container declared without one", async () => {
    const { resource } = await cosmos.client.database(TEST_DATABASE).container("orders").read();
    expect(resource?.partitionKey).toEqual({ paths: [TEST_PARTITION_KEY_PATH], kind: "Hash" });
  });

  it("stop() releases the port even while a keep-alive client holds a connection", async () => {
    const other = await startTestCosmos();
    await other.container("orders").items.create({ id: "k", orderId: "k" });
    const { endpoint } = other.emulator;
    await other.emulator.stop();
    await expect(fetch(endpoint)).rejects.toThrow();
    other.client.dispose();
  });
});

describe("Cosmos emulator config", () => {
  it("reads the config from a file, and creates nothing without one", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cosmos-config-"));
    const file = path.join(dir, "cosmos.json");
    fs.writeFileSync(file, JSON.stringify(TEST_COSMOS_CONFIG));
    const fromFile = await startCosmosEmulator({ port: 0, config: file });
    const bare = await startCosmosEmulator({ port: 0 });
    const clients = [fromFile, bare].map((e) => emulatorClient(e.endpoint));
    try {
      expect(fromFile.databases).toEqual([TEST_DATABASE]);
      const { resources } = await clients[0]!.database(TEST_DATABASE).containers.readAll().fetchAll();
      expect(resources.map((c) => c.id).sort()).toEqual([...TEST_CONTAINERS].sort());
      expect(bare.databases).toEqual([]);
      expect((await clients[1]!.databases.readAll().fetchAll()).resources).toEqual([]);
    } finally {
      clients.forEach((c) => c.dispose());
      await Promise.all([fromFile.stop(), bare.stop()]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a config with unknown fields or a bad partition key, naming each problem, before it listens", () => {
    const bad = {
      databases: [
        {
          id: "db",
          containers: [{ id: "c", partitionKey: { paths: ["orderId"] }, indexingPolicy: { mode: "x" } }],
        },
      ],
    };
    let message = "";
    try {
      loadCosmosConfig(bad);
    } catch (error) {
      expect(error).toBeInstanceOf(CosmosConfigError);
      message = (error as Error).message;
    }
    expect(message).toContain(
      "databases.0.containers.0.partitionKey.paths.0: a partition key path starts with /",
    );
    expect(message).toContain("databases.0.containers.0.indexingPolicy");
    expect(() => loadCosmosConfig(path.join(os.tmpdir(), "no-such-cosmos-config.json"))).toThrow(
      /Cannot read the Cosmos DB emulator config/,
    );
  });
});

describe("writes the store relies on", () => {
  it("lets exactly one of 20 concurrent creates of the same id win; the rest get 409", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, writer) =>
        statusOf(state.items.create({ id: "race-create", orderId: "race-create", writer })),
      ),
    );
    expect(tally(statuses)).toEqual({ 201: 1, 409: 19 });
  });

  it("lets exactly one of 20 concurrent IfMatch replaces on the same etag win; the rest get 412", async () => {
    const doc = { id: "race-replace", orderId: "race-replace", processState: "Pending" };
    const { etag } = await state.items.create(doc);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, writer) =>
        statusOf(
          state
            .item(doc.id, doc.orderId)
            .replace(
              { ...doc, processState: "Processing", writer },
              { accessCondition: { type: "IfMatch", condition: etag } },
            ),
        ),
      ),
    );
    expect(tally(statuses)).toEqual({ 200: 1, 412: 19 });

    const { resource, etag: after } = await state.item(doc.id, doc.orderId).read<StateDoc>();
    expect(resource?.processState).toBe("Processing");
    expect(after).not.toBe(etag);
    // The loser's next attempt with the etag it read before the race is refused too.
    const stale = state
      .item(doc.id, doc.orderId)
      .replace(doc, { accessCondition: { type: "IfMatch", condition: etag } });
    expect(await statusOf(stale)).toBe(412);
  });

  it("replaces with the current etag and hands back a new one", async () => {
    const doc = { id: "replace-ok", orderId: "replace-ok", processState: "Pending" };
    const created = await state.items.create(doc);
    const replaced = await state
      .item(doc.id, doc.orderId)
      .replace(
        { ...doc, processState: "Processing" },
        { accessCondition: { type: "IfMatch", condition: created.etag } },
      );
    expect(replaced.statusCode).toBe(200);
    expect(replaced.etag).not.toBe(created.etag);
    expect(replaced.resource?._etag).toBe(replaced.etag);
    const read = await state.item(doc.id, doc.orderId).read<StateDoc>();
    expect(read.etag).toBe(replaced.etag);
    expect(read.resource?.processState).toBe("Processing");
  });

  it("reads a missing item as 404 without throwing", async () => {
    const response = await state.item("no-such-order", "no-such-order").read();
    expect(response.statusCode).toBe(404);
    expect(response.resource).toBeUndefined();
  });
});

describe("queries the scheduler and supervisor rely on", () => {
  const NOW = "2026-01-01T12:00:00.000Z";
  const due: StateDoc[] = [];

  beforeAll(async () => {
    const docs: StateDoc[] = [];
    for (let i = 0; i < 40; i += 1) {
      const orderId = `Q-${String(i).padStart(3, "0")}`;
      // Scattered partitions, every other minute, with ties, half of them past NOW: the claim query must
      // see each due one exactly once across pages.
      const minute = (i * 7) % 30;
      const completeBy = new Date(Date.parse("2026-01-01T11:45:00.000Z") + minute * 60_000).toISOString();
      const processState = i % 3 === 0 ? "Pending" : "Processing";
      docs.push({
        id: orderId,
        orderId,
        processState,
        completeBy,
        createdAt: `2026-01-01T10:00:${String(i).padStart(2, "0")}.000Z`,
      });
    }
    await Promise.all(docs.map((d) => state.items.create(d)));
    due.push(
      ...docs
        .filter((d) => d.processState === "Processing" && d.completeBy < NOW)
        .sort((a, b) => a.completeBy.localeCompare(b.completeBy)),
    );
  });

  const claimQuery: SqlQuerySpec = {
    query: "SELECT * FROM c WHERE c.processState = @state AND c.completeBy < @now ORDER BY c.completeBy",
    parameters: [
      { name: "@state", value: "Processing" },
      { name: "@now", value: NOW },
    ],
  };

  async function pages(
    options: FeedOptions,
  ): Promise<{ pages: StateDoc[][]; continuations: (string | undefined)[] }> {
    const iterator = state.items.query<StateDoc>(claimQuery, options);
    const out: StateDoc[][] = [];
    const continuations: (string | undefined)[] = [];
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      if (page.resources.length > 0) out.push(page.resources);
      continuations.push(page.continuationToken);
    }
    return { pages: out, continuations };
  }

  it("has due work in the fixture, spread over several partitions, with equal completeBy values", () => {
    expect(due.length).toBeGreaterThan(10);
    expect(new Set(due.map((d) => d.completeBy)).size).toBeLessThan(due.length);
  });

  it("pages a cross-partition WHERE + ORDER BY in global order, without duplicates or gaps", async () => {
    const { pages: got } = await pages({ maxItemCount: 5 });
    expect(got.map((p) => p.length)).toEqual(chunkSizes(due.length, 5));
    const flat = got.flat();
    expect(flat.map((d) => d.completeBy)).toEqual(due.map((d) => d.completeBy));
    expect(new Set(flat.map((d) => d.id)).size).toBe(due.length);
    expect(new Set(flat.map((d) => d.id))).toEqual(new Set(due.map((d) => d.id)));
  });

  it("resumes the same query from a continuation token in a new iterator", async () => {
    const first = await state.items.query<StateDoc>(claimQuery, { maxItemCount: 5 }).fetchNext();
    expect(first.resources).toHaveLength(5);
    expect(first.continuationToken).toEqual(expect.any(String));

    const rest = await pages({ maxItemCount: 5, continuationToken: first.continuationToken });
    const flat = [...first.resources, ...rest.pages.flat()];
    expect(flat.map((d) => d.id)).toHaveLength(due.length);
    expect(new Set(flat.map((d) => d.id))).toEqual(new Set(due.map((d) => d.id)));
    expect(flat.map((d) => d.completeBy)).toEqual(due.map((d) => d.completeBy));
    expect(rest.continuations.at(-1)).toBeUndefined();
  });

  it("counts with SELECT VALUE COUNT(1) and a WHERE", async () => {
    const count: SqlQuerySpec = {
      query: "SELECT VALUE COUNT(1) FROM c WHERE c.processState = @state AND c.completeBy < @now",
      parameters: claimQuery.parameters,
    };
    const { resources } = await state.items.query<number>(count).fetchAll();
    expect(resources).toEqual([due.length]);
  });

  it("takes the first rows with TOP", async () => {
    const top = { ...claimQuery, query: claimQuery.query.replace("SELECT *", "SELECT TOP 3 *") };
    const { resources } = await state.items.query<StateDoc>(top).fetchAll();
    expect(resources.map((d) => d.completeBy)).toEqual(due.slice(0, 3).map((d) => d.completeBy));
  });

  it("scopes a query and a read of all items to the partitionKey option", async () => {
    // A second item in one partition (not due, not a Q- id: the other tests here do not see it).
    await state.items.create({ id: "twin-Q-001", orderId: "Q-001", processState: "Pending" });
    const { resources: queried } = await state.items
      .query<StateDoc>("SELECT * FROM c", { partitionKey: "Q-001" })
      .fetchAll();
    expect(queried.map((d) => d.id).sort()).toEqual(["Q-001", "twin-Q-001"]);
    const { resources: all } = await state.items.readAll<StateDoc>({ partitionKey: "Q-001" }).fetchAll();
    expect(all.map((d) => d.id).sort()).toEqual(["Q-001", "twin-Q-001"]);
  });

  it("orders by state then creation time through the composite index", async () => {
    const { resources } = await state.items
      .query<StateDoc>(
        "SELECT c.id, c.processState, c.createdAt FROM c WHERE STARTSWITH(c.id, 'Q-') ORDER BY c.processState, c.createdAt",
      )
      .fetchAll();
    const keys = resources.map((d) => `${d.processState} ${d.createdAt}`);
    expect(resources).toHaveLength(40);
    expect(keys).toEqual([...keys].sort());
  });
});

function chunkSizes(total: number, size: number): number[] {
  const sizes: number[] = [];
  for (let left = total; left > 0; left -= size) sizes.push(Math.min(size, left));
  return sizes;
}
