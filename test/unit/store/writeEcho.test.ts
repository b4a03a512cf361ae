import { describe, expect, it } from "vitest";
import { withSystemProperties } from "../../../src/store/writeEcho";

describe("withSystemProperties", () => {
  const sent = { id: "admission:0", entries: [{ holder: "ORD-1:1" }], updatedAt: "2026-12-03T21:00:00.000Z" };

  it("keeps what was sent and takes the store's system properties from its answer", () => {
    const answer = {
      ...sent,
      _etag: '"00000a"',
      _ts: 1_764_795_600,
      _rid: "abc==",
      _self: "dbs/x/colls/y/docs/z/",
    };
    expect(withSystemProperties(sent, answer, "admission shard admission:0")).toEqual({
      ...sent,
      _etag: '"00000a"',
      _ts: 1_764_795_600,
      _rid: "abc==",
      _self: "dbs/x/colls/y/docs/z/",
    });
  });

  it("replaces the etag the sent document still carried from its read", () => {
    const written = withSystemProperties({ ...sent, _etag: '"old"' }, { ...sent, _etag: '"new"' }, "shard");
    expect(written._etag).toBe('"new"');
  });

  it("takes nothing else from the answer: the sent document is the one the app made", () => {
    const written = withSystemProperties(sent, { ...sent, entries: [], extra: 1, _etag: '"e"' }, "shard");
    expect(written.entries).toEqual(sent.entries);
    expect(written).not.toHaveProperty("extra");
  });

  it("fails, naming the document, when the answer has no etag", () => {
    expect(() => withSystemProperties(sent, { ...sent }, "admission shard admission:0")).toThrow(
      "admission shard admission:0: the store's answer to a write has no _etag",
    );
    expect(() => withSystemProperties(sent, undefined, "state record ORD-1")).toThrow(/state record ORD-1/);
  });
});
