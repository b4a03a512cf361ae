/**
 * The state store's conditional writes (src/store/stateWrites.ts) through the real @azure/cosmos client against
 * the embedded emulator: create once, conditional replace under races, and the Supervisor's skip on a 412.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { claim, expire, type StateRecord } from "../../../src/domain";
import { StateStore } from "../../../src/store/stateStore";
import { at } from "../../support/domain";
import { newRecord, useStateContainers } from "../../support/stateContainers";

let store: StateStore;

const containers = useStateContainers();

beforeEach(async () => {
  store = new StateStore(await containers.fresh());
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
});
