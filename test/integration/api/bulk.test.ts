/**
 * The bulk actions' handler against the real state store on the embedded Cosmos DB emulator, for what the
 * end-to-end run cannot time: a record another writer moves between the page's read and the bulk write, and a
 * Pending backlog at MAX_PENDING_BACKLOG. Records are brought to Error by the same pure transitions the app runs.
 */
import { HttpRequest } from "@azure/functions";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadCosmosConfig, startCosmosEmulator, type CosmosEmulator } from "devhost/emulators";
import { bulkActionRequest, type BulkAnswer } from "../../../src/api/bulk";
import type { Principal } from "../../../src/api/principal";
import { loadConfig } from "../../../src/config";
import {
  alertSent,
  claim,
  expire,
  operatorRetry,
  orderWorkflowV1,
  type StateRecord,
} from "../../../src/domain";
import { createCosmosClient } from "../../../src/store/cosmos";
import { StateStore, type ListPosition, type RecordFilter } from "../../../src/store/stateStore";
import { emulatorConfigFiles } from "../../../tools/repository";
import { at, ok, pendingRecord, sampleOrder, TEST_PAGING_KEY } from "../../support/domain";

const appCosmos = loadCosmosConfig(emulatorConfigFiles().cosmos).databases[0]!;
const stateDefinition = appCosmos.containers.find((c) => c.id === "state")!;
const ENV = {
  ServiceBusConnection:
    "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
  CosmosConnection: "AccountEndpoint=http://127.0.0.1:8081/;AccountKey=a2V5;",
  PAGING_TOKEN_KEY: TEST_PAGING_KEY,
};
const ada: Principal = {
  id: "oid-ada",
  name: "ada@contoso.com",
  roles: ["Orders.Operator"],
  provider: "aad",
};

const quiet = { log() {}, warn() {}, error() {} };

/** Another writer: runs `between` on the page a bulk action has just read, before the action writes. */
class RacedStore extends StateStore {
  between: ((page: StateRecord[]) => Promise<void>) | undefined;
  override async list(opts: RecordFilter & { limit: number; after?: ListPosition | undefined }) {
    const page = await super.list(opts);
    await this.between?.(page.items);
    return page;
  }
}

let emulator: CosmosEmulator;
let client: ReturnType<typeof createCosmosClient>;
let store: RacedStore;
let run = 0;

beforeAll(async () => {
  emulator = await startCosmosEmulator({ port: 0, config: emulatorConfigFiles().cosmos });
  client = createCosmosClient({ kind: "key", endpoint: emulator.endpoint + "/", key: emulator.key });
});
afterAll(async () => {
  client.dispose();
  await emulator.stop();
});
beforeEach(async () => {
  const { container } = await client
    .database(appCosmos.id)
    .containers.createIfNotExists({ ...stateDefinition, id: `bulk-${++run}` });
  store = new RacedStore(container);
});

/** A record parked in Error by the Supervisor at `second`, its alert decided and not yet marked sent. */
async function inError(orderId: string, second: number): Promise<StateRecord> {
  const { record } = await store.create(pendingRecord(sampleOrder({ orderId }), orderWorkflowV1));
  const claimed = ok(claim(record, { now: at(second - 10), claimTimeoutSeconds: 5 }));
  const failed = ok(
    expire(claimed, {
      now: at(second),
      expectedLockedBy: claimed.lockedBy!,
      maxFailures: 0,
      backoffSeconds: 1,
    }),
  );
  return (await store.replace({ ...failed, _etag: record._etag }))!;
}

async function call(body: unknown, settings: Record<string, string> = {}) {
  const request = new HttpRequest({
    method: "POST",
    url: "http://127.0.0.1/api/bulk/retry",
    headers: { "content-type": "application/json" },
    body: { string: JSON.stringify(body) },
  });
  const deps = { config: loadConfig({ ...ENV, ...settings }), states: store, now: () => at(1000) };
  const { response } = await bulkActionRequest(deps, quiet, request, "retry", ada);
  return response;
}

describe("bulk retry", () => {
  it("counts a record moved between the read and the write as refused, and leaves that writer's change", async () => {
    for (let i = 1; i <= 3; i++) await inError(`RACE-${i}`, 100 + i);
    // RACE-2's alert goes out (still Error, a new _etag), RACE-3 is retried by hand, both after the page is read.
    store.between = async () => {
      store.between = undefined;
      await store.apply("RACE-2", (r) =>
        alertSent(r, { now: at(500), messageId: r.alert!.messageId, by: "supervisor" }),
      );
      await store.apply("RACE-3", (r) => operatorRetry(r, { now: at(500), operator: "bob@contoso.com" }));
    };
    const response = await call({ filter: { state: "Error" }, reason: "outage over" });
    expect(response.status).toBe(200);
    expect(response.jsonBody).toEqual({
      dryRun: false,
      matched: 3,
      acted: 1,
      refused: 2,
      sample: ["RACE-1"],
      continuation: null,
      remaining: 0,
    } satisfies BulkAnswer);
    expect(await store.get("RACE-1")).toMatchObject({ processState: "Pending", alert: null });
    // Not overwritten: the alert stays marked sent, and the record stays in Error for a later run.
    expect(await store.get("RACE-2")).toMatchObject({
      processState: "Error",
      alert: { sentAt: at(500).toISOString() },
    });
    const race3 = (await store.get("RACE-3"))!;
    expect(race3.history.filter((h) => h.event === "operatorRetry").map((h) => h.by)).toEqual([
      "operator:bob@contoso.com",
    ]);
  });

  it("refuses a continuation this API did not sign, naming it, before it reads or moves anything", async () => {
    await inError("FORGED-1", 100);
    const before = await store.get("FORGED-1");
    store.between = () => Promise.reject(new Error("the page was read"));
    const position = Buffer.from(JSON.stringify({ updatedAt: at(200).toISOString(), orderId: "FORGED-1" }));
    const response = await call({ filter: { state: "Error" }, continuation: position.toString("base64url") });
    expect(response.status).toBe(400);
    expect((response.jsonBody as { error: string }).error).toMatch(
      /^continuation: expected the continuation of a previous page of this listing, got .+: not issued by this API \(it carries no signature\)$/,
    );
    expect(await store.get("FORGED-1")).toEqual(before);
    store.between = undefined;
  });

  it("filters by error code and by a half-open window on updatedAt", async () => {
    for (let i = 1; i <= 4; i++) await inError(`WIN-${i}`, 100 * i);
    const dry = (filter: Record<string, unknown>) =>
      call({ filter: { state: "Error", ...filter }, dryRun: true });
    const window = { updatedSince: at(200).toISOString(), updatedBefore: at(400).toISOString() };
    expect((await dry(window)).jsonBody).toMatchObject({ matched: 2, sample: ["WIN-3", "WIN-2"] });
    expect((await dry({ ...window, errorCode: "RetriesExhausted" })).jsonBody).toMatchObject({ matched: 2 });
    expect((await dry({ ...window, errorCode: "Timeout" })).jsonBody).toMatchObject({
      matched: 0,
      sample: [],
    });
  });

  it("moves no more Error orders to Pending than MAX_PENDING_BACKLOG leaves room for, and answers 429 when full", async () => {
    for (let i = 1; i <= 3; i++) await inError(`ROOM-${i}`, 100 + i);
    await store.create(pendingRecord(sampleOrder({ orderId: "WAITING" }), orderWorkflowV1));
    const tight = { MAX_PENDING_BACKLOG: "2" };

    const first = await call({ filter: { state: "Error" } }, tight);
    expect(first.jsonBody).toMatchObject({ matched: 3, acted: 1, sample: ["ROOM-3"], remaining: 2 });
    const full = await call(
      { filter: { state: "Error" }, continuation: (first.jsonBody as BulkAnswer).continuation },
      tight,
    );
    expect(full.status).toBe(429);
    expect(full.headers).toMatchObject({ "retry-after": "10" });
    expect((full.jsonBody as { error: string }).error).toContain("MAX_PENDING_BACKLOG=2");
    // A dry run still counts.
    expect((await call({ filter: { state: "Error" }, dryRun: true }, tight)).jsonBody).toMatchObject({
      matched: 2,
      acted: 2,
    });
  });
});
