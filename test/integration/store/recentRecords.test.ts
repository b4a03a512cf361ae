/**
 * The cache of the records this instance read or wrote last (src/store/recentRecords.ts), through StateStore and
 * the real @azure/cosmos client against the embedded emulator: writes start from the version known, and a stale
 * copy never loses an update nor refuses what the record allows.
 */
import type { Container } from "@azure/cosmos";
import { beforeEach, describe, expect, it } from "vitest";
import { claim, expire, type StateRecord } from "../../../src/domain";
import { StateStore } from "../../../src/store/stateStore";
import { at } from "../../support/domain";
import { newRecord, useStateContainers } from "../../support/stateContainers";

let store: StateStore;
/** The test's own state container; a second StateStore on it is a second instance of the app. */
let container: Container;
/** Point reads of state records the emulator has served since the test began. */
let pointReads = 0;

const containers = useStateContainers((request) => {
  if (request.method === "GET" && /\/docs\/[^/]+$/.test(request.url ?? "")) pointReads++;
});

beforeEach(async () => {
  container = await containers.fresh();
  store = new StateStore(container);
  pointReads = 0;
});

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
