/**
 * The state store adapter through the real @azure/cosmos client against the embedded emulator: conditional
 * writes under races, and the paged queries the starter, Supervisor and operator API rely on.
 */
import type { Container } from "@azure/cosmos";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { claim, expire, orderWorkflowV1, submit, type StateRecord } from "../../../src/domain";
import { createCosmosClient } from "../../../src/store/cosmos";
import { StateStore } from "../../../src/store/stateStore";
import { loadCosmosConfig, startCosmosEmulator, type CosmosEmulator } from "devhost/emulators";
import { emulatorConfigFiles } from "../../../tools/repository";
import { T0, at, sampleOrder } from "../../support/domain";

// The app's own database and state container definition (infra/cosmos-emulator.config.json), which the
// deployment's Bicep reads too: the queries below run against the indexes Azure has.
const appCosmos = loadCosmosConfig(emulatorConfigFiles().cosmos).databases[0]!;
const stateDefinition = appCosmos.containers.find((c) => c.id === "state")!;

let emulator: CosmosEmulator;
let store: StateStore;
/** The test's own state container; a second StateStore on it is a second instance of the app. */
let container: Container;
let client: ReturnType<typeof createCosmosClient>;
let run = 0;
/** Point reads of state records the emulator has served since the test began. */
let pointReads = 0;

beforeAll(async () => {
  emulator = await startCosmosEmulator({
    port: 0,
    config: emulatorConfigFiles().cosmos,
    onRequest: (request) => {
      if (request.method === "GET" && /\/docs\/[^/]+$/.test(request.url ?? "")) pointReads++;
    },
  });
  client = createCosmosClient({ kind: "key", endpoint: emulator.endpoint + "/", key: emulator.key });
});

afterAll(async () => {
  client.dispose();
  await emulator.stop();
});

beforeEach(async () => {
  // A fresh container per test keeps the tests independent without restarting the emulator.
  const id = `state-${++run}`;
  ({ container } = await client
    .database(appCosmos.id)
    .containers.createIfNotExists({ ...stateDefinition, id }));
  store = new StateStore(container);
  pointReads = 0;
});

const newRecord = (orderId: string, createdAt = T0): StateRecord =>
  submit(sampleOrder({ orderId }), { now: createdAt, workflow: orderWorkflowV1 });

describe("StateStore: the version this instance knows", () => {
  const claimAt = (now: Date) => (r: StateRecord) => claim(r, { now, claimTimeoutSeconds: 30 });

  it("writes from the version it created or wrote last, with no read before the write", async () => {
    await store.create(newRecord("KNOWN-1"));
    const claimed = await store.apply("KNOWN-1", claimAt(at(10)));
    expect(claimed).toMatchObject({ kind: "written", record: { processState: "Processing" } });
    const expired = await store.apply("KNOWN-1", (r) =>
      expire(r, { now: at(100), expectedLockedBy: "KNOWN-1:1", maxFailures: 3, backoffSeconds: 1 }),
    );
    expect(expired).toMatchObject({ kind: "written", record: { processState: "Pending", failureCount: 1 } });
    expect(pointReads).toBe(0);
  });

  it("never loses an update when another instance wrote since: the stale copy's write fails, then it re-decides", async () => {
    const other = new StateStore(container);
    await store.create(newRecord("KNOWN-2"));
    // The other instance claims it: this one's copy still says Pending.
    expect((await other.apply("KNOWN-2", claimAt(at(10)))).kind).toBe("written");
    const second = await store.apply("KNOWN-2", claimAt(at(11)));
    expect(second).toMatchObject({ kind: "refused", refusal: { code: "WrongState" } });
    expect(await other.get("KNOWN-2")).toMatchObject({ processState: "Processing", lockedBy: "KNOWN-2:1" });
  });

  it("checks a refusal decided on its copy against a fresh read, so a stale copy never refuses", async () => {
    const other = new StateStore(container);
    await store.create(newRecord("KNOWN-3"));
    expect((await store.apply("KNOWN-3", claimAt(at(10)))).kind).toBe("written");
    // The other instance's Supervisor sends the attempt back: this one's copy still says Processing.
    const back = await other.apply("KNOWN-3", (r) =>
      expire(r, { now: at(100), expectedLockedBy: "KNOWN-3:1", maxFailures: 3, backoffSeconds: 1 }),
    );
    expect(back.kind).toBe("written");
    pointReads = 0;
    // On the copy, a claim is refused (Processing); on the record it is allowed.
    const reclaimed = await store.apply("KNOWN-3", claimAt(at(200)));
    expect(reclaimed).toMatchObject({ kind: "written", record: { attempt: 2, lockedBy: "KNOWN-3:2" } });
    expect(pointReads).toBe(1);
    // getRecent shows the copy; a caller told it is one can ask the store.
    const copy = await store.getRecent("KNOWN-3");
    expect(store.isRecentCopy(copy)).toBe(true);
    expect(store.isRecentCopy(await store.get("KNOWN-3"))).toBe(false);
  });
});

describe("StateStore", () => {
  it("creates a record once; a second create returns the stored one", async () => {
    const first = await store.create(newRecord("ORD-1"));
    expect(first.created).toBe(true);
    expect(first.record._etag).toBeTruthy();
    const again = await store.create({ ...newRecord("ORD-1"), customerId: "other" } as StateRecord);
    expect(again).toMatchObject({ created: false, record: { orderId: "ORD-1", processState: "Pending" } });
  });

  it("lets exactly one of 20 concurrent claimers win; the others re-read and are refused", async () => {
    await store.create(newRecord("ORD-2"));
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        store.apply("ORD-2", (r) => claim(r, { now: at(1), claimTimeoutSeconds: 60 })),
      ),
    );
    const kinds = outcomes.map((o) => o.kind).sort();
    expect(kinds.filter((k) => k === "written")).toHaveLength(1);
    expect(kinds.filter((k) => k === "refused")).toHaveLength(19);
    const stored = await store.get("ORD-2");
    expect(stored).toMatchObject({ processState: "Processing", attempt: 1, lockedBy: "ORD-2:1" });
  });

  it("refuses a replace from a stale copy (412) instead of overwriting", async () => {
    const { record } = await store.create(newRecord("ORD-3"));
    const claimed = claim(record, { now: at(1), claimTimeoutSeconds: 60 });
    if (!claimed.ok) throw new Error("claim refused");
    expect(await store.replace({ ...claimed.record, _etag: record._etag })).toBeTruthy();
    expect(await store.replace({ ...claimed.record, _etag: record._etag })).toBeUndefined();
  });

  it("lets the Supervisor skip a record someone else moved (applyIfUnchanged)", async () => {
    await store.create(newRecord("ORD-4"));
    await store.apply("ORD-4", (r) => claim(r, { now: at(1), claimTimeoutSeconds: 60 }));
    const read = (await store.get("ORD-4"))!;
    const ctx = { now: at(100), expectedLockedBy: read.lockedBy!, maxFailures: 3, backoffSeconds: 10 };
    const first = await store.applyIfUnchanged(read, (r) => expire(r, ctx));
    expect(first.kind).toBe("written");
    const second = await store.applyIfUnchanged(read, (r) => expire(r, ctx));
    expect(second.kind).toBe("conflict");
    expect((await store.get("ORD-4"))!.failureCount).toBe(1);
  });

  it("reports a missing record as notFound", async () => {
    expect(await store.apply("nope", (r) => claim(r, { now: at(1), claimTimeoutSeconds: 60 }))).toEqual({
      kind: "notFound",
    });
    expect(await store.get("nope")).toBeUndefined();
  });

  it("finds claimable records oldest first, skipping locked and not-yet-due ones", async () => {
    for (let i = 0; i < 5; i++) await store.create(newRecord(`ORD-C${i}`, at(i)));
    await store.apply("ORD-C1", (r) => claim(r, { now: at(10), claimTimeoutSeconds: 60 }));
    // ORD-C3 expired and waits for its back-off.
    await store.apply("ORD-C3", (r) => claim(r, { now: at(10), claimTimeoutSeconds: 1 }));
    const c3 = (await store.get("ORD-C3"))!;
    await store.apply("ORD-C3", (r) =>
      expire(r, { now: at(20), expectedLockedBy: c3.lockedBy!, maxFailures: 3, backoffSeconds: 100 }),
    );
    const page = await store.findClaimable(at(30), 10);
    expect(page.items.map((r) => r.orderId)).toEqual(["ORD-C0", "ORD-C2", "ORD-C4"]);
    const later = await store.findClaimable(at(200), 2);
    expect(later.items.map((r) => r.orderId)).toEqual(["ORD-C0", "ORD-C2"]);
  });

  it("pages expired attempts inside the window, oldest deadline first, with continuation tokens", async () => {
    for (let i = 0; i < 7; i++) {
      await store.create(newRecord(`ORD-E${i}`));
      // Claim deadlines at 100 + i seconds.
      await store.apply(`ORD-E${i}`, (r) => claim(r, { now: at(i), claimTimeoutSeconds: 100 }));
    }
    const seen: string[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const page = await store.findExpired({ now: at(105), windowStart: at(101), pageSize: 2, continuation });
      seen.push(...page.items.map((r) => r.orderId));
      continuation = page.continuation;
      pages++;
    } while (continuation);
    // Deadlines 101..105 are expired and inside the window; 100 is before it, 106 not yet due.
    expect(seen).toEqual(["ORD-E1", "ORD-E2", "ORD-E3", "ORD-E4", "ORD-E5"]);
    expect(pages).toBe(3);
  });

  it("lists newest first, within a state or across all, page after page without gaps or repeats", async () => {
    // Seven records; three share one updatedAt, so the orderId has to break the tie.
    const times = [at(1), at(2), at(2), at(2), at(3), at(4), at(5)];
    for (const [i, t] of times.entries()) await store.create(newRecord(`ORD-L${i}`, t));
    await store.apply("ORD-L6", (r) => claim(r, { now: at(10), claimTimeoutSeconds: 60 }));

    const walk = async (state?: "Pending") => {
      const seen: string[] = [];
      let after: Awaited<ReturnType<StateStore["list"]>>["next"];
      do {
        const page = await store.list({ state, limit: 2, after });
        seen.push(...page.items.map((r) => r.orderId));
        after = page.next;
      } while (after);
      return seen;
    };
    expect(await walk()).toEqual(["ORD-L6", "ORD-L5", "ORD-L4", "ORD-L3", "ORD-L2", "ORD-L1", "ORD-L0"]);
    expect(await walk("Pending")).toEqual(["ORD-L5", "ORD-L4", "ORD-L3", "ORD-L2", "ORD-L1", "ORD-L0"]);
    // A full last page says so: no position to resume from.
    expect((await store.list({ state: "Pending", limit: 6 })).next).toBeUndefined();

    const counts = await store.countByState();
    expect(counts).toMatchObject({ Pending: 6, Processing: 1, Processed: 0 });
    expect(await store.count(["Pending", "Processing"])).toBe(7);
  });
});
