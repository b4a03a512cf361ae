// Known differences between the embedded stand-in (@vercel/cosmosdb-server 1.0.1 behind the emulator's
// gateway) and real Cosmos DB, each asserted as the stand-in behaves today. An app can avoid every one of them
// (docs/cosmos-emulator.md in this package says how). A test here failing means a new server version changed
// the behaviour: update the doc and, if the difference is gone, the workaround may be dropped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BulkOperationType, ChangeFeedStartFrom, type Container, type OperationInput } from "@azure/cosmos";
import {
  startTestCosmos,
  statusOf,
  TEST_DATABASE,
  TEST_INDEXING_POLICY,
  type TestCosmos,
} from "../../support/cosmos";

let cosmos: TestCosmos;
let state: Container;

beforeAll(async () => {
  cosmos = await startTestCosmos();
  state = cosmos.container("state");
  await Promise.all(
    ["A", "A", "B", "C"].map((orderId, i) =>
      state.items.create({
        id: `diff-${i}`,
        orderId,
        processState: "Pending",
        createdAt: `2026-01-01T00:00:0${i}Z`,
      }),
    ),
  );
});
afterAll(async () => {
  await cosmos?.stop();
});

/** 200 when the query runs to the end, else the status the SDK threw. */
const queryStatus = (query: string): Promise<number> =>
  statusOf(
    state.items
      .query(query)
      .fetchAll()
      .then(() => ({ statusCode: 200 })),
  );

describe("Cosmos stand-in differences the project must avoid", () => {
  it("rejects OFFSET/LIMIT with 400 (real Cosmos supports it): page with maxItemCount + continuation or TOP", async () => {
    const query = "SELECT * FROM c WHERE c.processState = 'Pending' ORDER BY c.createdAt OFFSET 0 LIMIT 2";
    expect(await queryStatus(query)).toBe(400);
  });

  it("lower-cases a patch filterPredicate, so a true camelCase condition fails with 412: use IfMatch instead", async () => {
    const item = state.item("diff-2", "B");
    const patch = item.patch({
      condition: "FROM c WHERE c.processState = 'Pending'",
      operations: [{ op: "set", path: "/processState", value: "Processing" }],
    });
    expect(await statusOf(patch)).toBe(412);

    const { etag } = await item.read();
    const guarded = item.patch([{ op: "set", path: "/processState", value: "Processing" }], {
      accessCondition: { type: "IfMatch", condition: etag },
    });
    expect(await statusOf(guarded)).toBe(200);
  });

  it("does not roll back a transactional batch when one operation fails (real Cosmos does): avoid batches", async () => {
    const ops: OperationInput[] = [
      {
        operationType: BulkOperationType.Create,
        partitionKey: "A",
        resourceBody: { id: "batch-new", orderId: "A" },
      },
      {
        operationType: BulkOperationType.Create,
        partitionKey: "A",
        resourceBody: { id: "diff-0", orderId: "A" },
      },
    ];
    const response = await state.items.batch(ops, "A");
    expect(response.result?.map((r) => r.statusCode)).toEqual([201, 409]);
    expect((await state.item("batch-new", "A").read()).statusCode).toBe(200);
  });

  it("answers a read with IfNoneMatch on the current etag with 200 (real Cosmos: 304)", async () => {
    const { etag } = await state.item("diff-3", "C").read();
    const again = await state
      .item("diff-3", "C")
      .read({ accessCondition: { type: "IfNoneMatch", condition: etag } });
    expect(again.statusCode).toBe(200);
  });

  it('treats partition key 1 and "1" as the same partition (real Cosmos: distinct): orderIds are strings', async () => {
    expect(await statusOf(state.items.create({ id: "pk-type", orderId: "1" }))).toBe(201);
    expect(await statusOf(state.items.create({ id: "pk-type", orderId: 1 }))).toBe(409);
  });

  it("serves a composite index only in its declared direction (real Cosmos also serves the exact reverse)", async () => {
    const reverse = "SELECT * FROM c ORDER BY c.processState DESC, c.createdAt DESC";
    expect(await queryStatus(reverse)).toBe(400);
  });

  it("drops items lacking the single ORDER BY field (real Cosmos returns them first): always set it", async () => {
    await state.items.create({ id: "no-created-at", orderId: "D", processState: "Pending" });
    const { resources } = await state.items
      .query<{ id: string }>("SELECT c.id FROM c WHERE c.processState = 'Pending' ORDER BY c.createdAt")
      .fetchAll();
    expect(resources.map((d) => d.id)).not.toContain("no-created-at");
  });

  it("does not expire items by TTL (real Cosmos deletes them): nothing may depend on expiry", async () => {
    const { container } = await cosmos.client.database(TEST_DATABASE).containers.createIfNotExists({
      id: "ttl-probe",
      partitionKey: { paths: ["/orderId"] },
      defaultTtl: 1,
      indexingPolicy: TEST_INDEXING_POLICY,
    });
    await container.items.create({ id: "short-lived", orderId: "T" });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await container.item("short-lived", "T").read()).statusCode).toBe(200);
  });

  it("does not deliver changes made after the first change feed read (real Cosmos does): the project reads no change feed", async () => {
    const feed = state.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const first = await feed.readNext();
    expect(first.result.length).toBeGreaterThan(0);
    await state.items.create({ id: "after-feed", orderId: "E" });
    const next = await feed.readNext();
    expect(next.result.map((d: { id: string }) => d.id)).not.toContain("after-feed");
  });
});
