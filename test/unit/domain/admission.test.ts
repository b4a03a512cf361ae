import { describe, expect, it } from "vitest";
import {
  ADMISSION,
  emptyShard,
  entriesToCheck,
  entryVerdict,
  claim,
  expire,
  freePlaces,
  mayStillBeGivenBack,
  nextCheck,
  shardCapacity,
  shardCount,
  updateShard,
  type PlaceEntry,
} from "../../../src/domain";
import { T0, ok, pendingRecord } from "../../support/domain";

const at = (s: number) => new Date(T0.getTime() + s * 1000);

const entry = (holder: string, ticket: string, checkAfter = at(60)): PlaceEntry => ({
  holder,
  ticket,
  orderId: holder.split(":")[0]!,
  recordEtag: `"etag-${holder}"`,
  takenAt: T0.toISOString(),
  checkAfter: checkAfter.toISOString(),
});

describe("admission shards", () => {
  it("split MAX_IN_FLIGHT into shards whose places add up to it exactly", () => {
    expect(shardCount(50, 25)).toBe(2);
    expect(shardCount(51, 25)).toBe(3);
    expect(shardCount(1, 25)).toBe(1);
    for (const max of [1, 7, 25, 26, 50, 99, 1000]) {
      const places = Array.from({ length: shardCount(max, 25) }, (_, k) => shardCapacity(k, max, 25));
      expect(places.reduce((a, b) => a + b, 0)).toBe(max);
      expect(Math.max(...places) - Math.min(...places)).toBeLessThanOrEqual(1);
      expect(Math.max(...places)).toBeLessThanOrEqual(25);
    }
    expect(shardCapacity(2, 50, 25)).toBe(0);
  });

  it("take places only while they fit, and give back by attempt or by ticket", () => {
    const shard = emptyShard(0, T0);
    const two = updateShard(shard, { take: [entry("A:1", "t1"), entry("B:1", "t2")] }, 3, T0)!;
    expect(freePlaces(two, 3)).toBe(1);
    expect(updateShard(two, { take: [entry("C:1", "t3"), entry("D:1", "t4")] }, 3, T0)).toBeUndefined();

    // Two claimers took a place for the same attempt; the one whose claim did not land gives back its own.
    const twice = updateShard(two, { take: [entry("A:1", "t3")] }, 3, T0)!;
    const oneLeft = updateShard(twice, { tickets: new Set(["t3"]) }, 3, T0)!;
    expect(oneLeft.entries.map((e) => e.ticket)).toEqual(["t1", "t2"]);
    // The attempt's lock ended: every entry naming it goes.
    const ended = updateShard(twice, { ended: new Set(["A:1"]) }, 3, T0)!;
    expect(ended.entries.map((e) => e.holder)).toEqual(["B:1"]);
  });

  it("never count a shard's free places below zero after MAX_IN_FLIGHT was lowered", () => {
    const full = updateShard(emptyShard(0, T0), { take: [entry("A:1", "t1"), entry("B:1", "t2")] }, 2, T0)!;
    expect(freePlaces(full, 1)).toBe(0);
  });

  it("check an entry only after its checkAfter", () => {
    const shard = { ...emptyShard(0, T0), entries: [entry("A:1", "t1", at(10)), entry("B:1", "t2", at(60))] };
    expect(entriesToCheck(shard, at(9))).toEqual([]);
    expect(entriesToCheck(shard, at(10)).map((e) => e.holder)).toEqual(["A:1"]);
  });

  it("keep a place whose attempt holds the record, fence one whose claim may still land, free the rest", () => {
    const e = entry("ORDER-1:1", "t1");
    const record = { ...pendingRecord(), orderId: "ORDER-1", _etag: e.recordEtag };
    expect(entryVerdict(e, { ...record, lockedBy: "ORDER-1:1", _etag: '"later"' })).toBe("held");
    expect(entryVerdict(e, record)).toBe("fence");
    expect(entryVerdict(e, { ...record, _etag: '"later"' })).toBe("free");
    expect(entryVerdict(e, { ...record, lockedBy: "ORDER-1:2", _etag: '"later"' })).toBe("free");
    expect(entryVerdict(e, undefined)).toBe("free");
  });

  it("check a held place again after its attempt's deadline, or a claim timeout from now if that is later", () => {
    const record = { ...pendingRecord(), completeBy: at(300).toISOString() };
    expect(nextCheck(record, at(100), 60)).toBe(at(300).toISOString());
    expect(nextCheck(record, at(290), 60)).toBe(at(350).toISOString());
    expect(nextCheck({ ...record, completeBy: null }, at(0), 60)).toBe(at(60).toISOString());
  });

  it("take a place found free for one still being given back only while its attempt's lock ended moments ago", () => {
    const claimed = ok(claim(pendingRecord(), { now: at(0), claimTimeoutSeconds: 100 }));
    const ended = ok(
      expire(claimed, { now: at(100), expectedLockedBy: "ORD-1001:1", maxFailures: 3, backoffSeconds: 1 }),
    );
    const place = entry("ORD-1001:1", "t1");
    const grace = ADMISSION.giveBackGraceMs / 1000;
    expect(mayStillBeGivenBack(place, ended, at(101))).toBe(true);
    expect(mayStillBeGivenBack(place, ended, at(100 + grace))).toBe(false);
    // A claim that never landed, or a record gone: no give-back was ever coming.
    expect(mayStillBeGivenBack(place, pendingRecord(), at(101))).toBe(false);
    expect(mayStillBeGivenBack(entry("ORD-1001:2", "t2"), ended, at(101))).toBe(false);
    expect(mayStillBeGivenBack(place, undefined, at(101))).toBe(false);
  });
});
