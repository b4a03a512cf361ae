// The task hub store's crash safety on its own: torn journal tails, snapshots taken at any moment, and the
// single-writer lock.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskHubStore, type InstanceRecord } from "../../../src/durable/store";
import { tempDataDir } from "../../support/durableHost";

const dirs: string[] = [];
const hubDir = (): string => {
  const dir = tempDataDir("durable-store-");
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const record = (id: string): InstanceRecord => ({
  instanceId: id,
  name: "Test",
  executionId: "e1",
  runtimeStatus: "Pending",
  createdTime: "2024-01-01T00:00:00.000Z",
  lastUpdatedTime: "2024-01-01T00:00:00.000Z",
  history: [],
  inbox: [],
  prevActions: [],
  signalsSent: 0,
  cancelledTimers: [],
});
const event = (n: number) => ({
  EventType: 15,
  EventId: -1,
  IsPlayed: false,
  Timestamp: "2024-01-01T00:00:00.000Z",
  Name: `e${n}`,
});

/** Everything the store holds, for comparing two recoveries. */
const contents = (s: TaskHubStore): unknown => ({
  instances: [...s.instances.values()],
  entities: [...s.entities.values()],
});

describe("TaskHubStore", () => {
  it("discards a torn last record (a write cut short by the kill) and keeps appending after it", () => {
    const dir = hubDir();
    const a = TaskHubStore.open(dir);
    a.commit([{ k: "putInstance", r: record("i1") }]);
    a.commit([{ k: "patchInstance", id: "i1", deliver: [event(1)], set: { runtimeStatus: "Running" } }]);
    const before = contents(a);
    a.close();
    const journal = path.join(dir, "journal.ndjson");
    const goodSize = fs.statSync(journal).size;
    fs.appendFileSync(journal, '{"seq":3,"ops":[{"k":"patchInstance","id":"i1","deliv');

    const b = TaskHubStore.open(dir);
    expect(contents(b)).toEqual(before);
    expect(fs.statSync(journal).size).toBe(goodSize);
    b.commit([{ k: "patchInstance", id: "i1", deliver: [event(2)] }]);
    b.close();
    const c = TaskHubStore.open(dir);
    expect(c.instances.get("i1")?.inbox.map((e) => e.Name)).toEqual(["e1", "e2"]);
    c.close();
  });

  it("recovers the same state from snapshot + journal, even when killed between snapshot and truncation", () => {
    const dir = hubDir();
    const a = TaskHubStore.open(dir, { compactAfterBytes: 600 });
    a.commit([{ k: "putInstance", r: record("i1") }]);
    for (let n = 0; n < 10; n++) a.commit([{ k: "patchInstance", id: "i1", append: [event(n)] }]);
    a.commit([
      {
        k: "putEntity",
        r: {
          schedulerId: "@c@k",
          name: "c",
          key: "k",
          exists: true,
          state: "1",
          queue: [],
          lastModified: "x",
        },
      },
    ]);
    expect(fs.existsSync(path.join(dir, "snapshot.json"))).toBe(true);
    const journalBeforeCompaction = fs.readFileSync(path.join(dir, "journal.ndjson"), "utf8");
    a.compact();
    const expected = contents(a);
    a.close();
    expect(contents(reopen(dir))).toEqual(expected);

    // The kill lands after the snapshot's rename, before the journal is emptied: the journal still holds
    // records the snapshot already contains; they must not apply twice.
    fs.writeFileSync(path.join(dir, "journal.ndjson"), journalBeforeCompaction);
    expect(contents(reopen(dir))).toEqual(expected);
  });

  it("takes over a hub whose owner died, and refuses one a live process holds", () => {
    const dir = hubDir();
    fs.writeFileSync(path.join(dir, "LOCK"), "999999999");
    const a = TaskHubStore.open(dir);
    a.close();
    fs.writeFileSync(path.join(dir, "LOCK"), String(process.ppid));
    expect(() => TaskHubStore.open(dir)).toThrow(new RegExp(`in use by process ${process.ppid}`));
  });
});

/** Opens the hub (running recovery) and closes it again; the in-memory contents stay readable. */
function reopen(dir: string): TaskHubStore {
  const s = TaskHubStore.open(dir);
  s.close();
  return s;
}
