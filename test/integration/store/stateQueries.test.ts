/**
 * The state store's queries (src/store/stateQueries.ts) through the real @azure/cosmos client against the
 * embedded emulator, on the state container's own indexes: the paged queries the starter, Supervisor and
 * operator API rely on.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { claim, expire } from "../../../src/domain";
import { StateStore } from "../../../src/store/stateStore";
import { at } from "../../support/domain";
import { newRecord, useStateContainers } from "../../support/stateContainers";

let store: StateStore;

const containers = useStateContainers();

beforeEach(async () => {
  store = new StateStore(await containers.fresh());
});

describe("StateStore", () => {
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
