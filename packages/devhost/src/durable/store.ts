// The persisted task hub: every orchestration instance (status, history, inbox of undelivered messages) and
// every entity (state, queue of pending operations), kept in memory and made durable with a write-ahead
// journal plus a periodic snapshot.
//
// Why a journal rather than one file per instance: an orchestration episode changes several records at once
// (its own history, a child it starts, an entity it calls, its parent it notifies), and a process killed
// between two separate file writes would leave half a transition behind. One journal line is one atomic
// transaction: on recovery a line is either complete (applied) or a torn tail (discarded). Nothing is ever
// acted on (activity run, timer armed, HTTP 202 sent) before the line describing it has been written.
// Writes reach the OS page cache synchronously, which survives SIGKILL; surviving power loss would need
// fsync, which a development host does not pay for.
import fs from "node:fs";
import path from "node:path";
import type { HistoryEvent } from "./history";
import { HubLock } from "./hubLock";

export type RuntimeStatus =
  "Pending" | "Running" | "Completed" | "ContinuedAsNew" | "Failed" | "Terminated" | "Suspended";
export const TERMINAL_STATUSES: readonly RuntimeStatus[] = ["Completed", "Failed", "Terminated"];
export const isTerminal = (s: RuntimeStatus): boolean => TERMINAL_STATUSES.includes(s);

export interface ParentLink {
  instanceId: string;
  executionId: string;
  /** The parent's task id for the CallSubOrchestrator action this child answers. */
  taskId: number;
}

export interface InstanceRecord {
  instanceId: string;
  name: string;
  version?: string;
  executionId: string;
  runtimeStatus: RuntimeStatus;
  /** JSON text of the current execution's input / the output / the custom status (absent = null). */
  input?: string;
  output?: string;
  customStatus?: string;
  createdTime: string;
  lastUpdatedTime: string;
  parent?: ParentLink;
  /** Events of the current execution that the orchestrator has already seen. */
  history: HistoryEvent[];
  /**
   * Messages received but not yet handed to an episode (completions, timer fires, events, terminate, suspend
   * and resume). While the instance is Suspended, the messages that are not resume or terminate wait here.
   */
  inbox: HistoryEvent[];
  /** Fingerprints of the actions the last episode produced, for the determinism check. */
  prevActions: string[];
  /** SignalEntity actions of this execution already sent (they have no task id to recognise them by). */
  signalsSent: number;
  /** Timer task ids the code cancelled: they are never delivered. */
  cancelledTimers: number[];
}

export interface EntityRequest {
  id: string;
  name: string;
  signal: boolean;
  input?: string;
  /** The calling orchestration, which gets the response (calls only, not signals). */
  parent?: { instanceId: string; executionId: string };
  enqueuedTime: string;
}

export interface EntityRecord {
  /** "@name@key" with the name lowercased, as EntityId.getSchedulerIdFromEntityId makes it. */
  schedulerId: string;
  name: string;
  key: string;
  exists: boolean;
  /** JSON text of the state, as the SDK keeps it. */
  state?: string;
  queue: EntityRequest[];
  lastModified: string;
}

/** Field updates: a value replaces the field, null deletes it (JSON has no undefined). */
type Patch<T> = { [K in keyof T]?: T[K] | null };

export type StoreOp =
  | { k: "putInstance"; r: InstanceRecord }
  | {
      k: "patchInstance";
      id: string;
      set?: Patch<Omit<InstanceRecord, "instanceId" | "history" | "inbox">>;
      /** Replaces the history before `append` (a new execution). */
      resetHistory?: boolean;
      append?: HistoryEvent[];
      /** Appends to prevActions (they only grow within an execution). */
      appendActions?: string[];
      /** Removes this many messages from the front of the inbox, before `deliver`. */
      consume?: number;
      /** Replaces the whole inbox (a new execution), before `deliver`. */
      replaceInbox?: HistoryEvent[];
      deliver?: HistoryEvent[];
    }
  | { k: "deleteInstance"; id: string }
  | { k: "putEntity"; r: EntityRecord }
  | {
      k: "patchEntity";
      id: string;
      set?: Patch<Pick<EntityRecord, "exists" | "state" | "lastModified">>;
      consume?: number;
      enqueue?: EntityRequest[];
    };

interface JournalRecord {
  seq: number;
  ops: StoreOp[];
}

interface Snapshot {
  format: 1;
  seq: number;
  instances: InstanceRecord[];
  entities: EntityRecord[];
}

export interface StoreOptions {
  /** Compact (snapshot + empty journal) once the journal exceeds this many bytes. */
  compactAfterBytes?: number;
}

// Two engines on one hub would interleave journal lines and corrupt it; catch it within a process too.
const openDirs = new Set<string>();

export class TaskHubStore {
  readonly instances = new Map<string, InstanceRecord>();
  readonly entities = new Map<string, EntityRecord>();
  private seq = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private fd: number | undefined;
  private readonly journalPath: string;
  private readonly snapshotPath: string;
  private lock: HubLock | undefined;
  private readonly compactAfterBytes: number;

  private constructor(
    readonly dir: string,
    opts: StoreOptions,
  ) {
    this.journalPath = path.join(dir, "journal.ndjson");
    this.snapshotPath = path.join(dir, "snapshot.json");
    this.compactAfterBytes = opts.compactAfterBytes ?? 8 * 1024 * 1024;
  }

  /** Opens (creating if needed) the hub in `dir`, recovering its state from snapshot + journal. */
  static open(dir: string, opts: StoreOptions = {}): TaskHubStore {
    const resolved = path.resolve(dir);
    if (openDirs.has(resolved)) throw new Error(`Task hub ${resolved} is already open in this process`);
    fs.mkdirSync(resolved, { recursive: true });
    const store = new TaskHubStore(resolved, opts);
    store.lock = HubLock.acquire(resolved);
    openDirs.add(resolved);
    try {
      store.recover();
    } catch (err) {
      store.close();
      throw err;
    }
    return store;
  }

  /** Applies the operations in memory and appends them to the journal as one atomic record. */
  commit(ops: StoreOp[]): void {
    if (ops.length === 0) return;
    if (this.fd === undefined) throw new Error(`Task hub ${this.dir} is closed`);
    const line = JSON.stringify({ seq: this.seq + 1, ops } satisfies JournalRecord) + "\n";
    fs.writeSync(this.fd, line);
    this.seq += 1;
    this.journalBytes += Buffer.byteLength(line);
    // Apply what was written, not the caller's objects: memory then equals what recovery will rebuild, and
    // no caller keeps a reference into the store's records.
    for (const op of (JSON.parse(line) as JournalRecord).ops) this.apply(op);
    // Snapshot once the journal outgrows the last snapshot too: the cost of compaction stays proportional
    // to the journal written, however large the hub gets.
    if (this.journalBytes > Math.max(this.compactAfterBytes, this.snapshotBytes)) this.compact();
  }

  /** Writes a snapshot of everything and empties the journal. */
  compact(): void {
    const snapshot: Snapshot = {
      format: 1,
      seq: this.seq,
      instances: [...this.instances.values()],
      entities: [...this.entities.values()],
    };
    const tmp = `${this.snapshotPath}.tmp`;
    const text = JSON.stringify(snapshot);
    fs.writeFileSync(tmp, text);
    this.snapshotBytes = Buffer.byteLength(text);
    fs.renameSync(tmp, this.snapshotPath);
    // Killed here, recovery reads the new snapshot and skips journal records it already contains (seq).
    if (this.fd !== undefined) fs.ftruncateSync(this.fd, 0);
    this.journalBytes = 0;
  }

  close(): void {
    if (this.fd !== undefined) {
      fs.closeSync(this.fd);
      this.fd = undefined;
    }
    if (this.lock) {
      this.lock.release();
      this.lock = undefined;
      openDirs.delete(this.dir);
    }
  }

  private recover(): void {
    let snapshotSeq = 0;
    if (fs.existsSync(this.snapshotPath)) {
      const text = fs.readFileSync(this.snapshotPath, "utf8");
      this.snapshotBytes = Buffer.byteLength(text);
      const snapshot = JSON.parse(text) as Snapshot;
      if (snapshot.format !== 1)
        throw new Error(`${this.snapshotPath}: unknown snapshot format ${snapshot.format}`);
      for (const r of snapshot.instances) this.instances.set(r.instanceId, r);
      for (const e of snapshot.entities) this.entities.set(e.schedulerId, e);
      snapshotSeq = snapshot.seq;
      this.seq = snapshot.seq;
    }
    let text = "";
    if (fs.existsSync(this.journalPath)) text = fs.readFileSync(this.journalPath, "utf8");
    let offset = 0;
    let goodBytes = 0;
    while (offset < text.length) {
      const nl = text.indexOf("\n", offset);
      if (nl < 0) break; // torn tail: the process died mid-write; that transaction never happened
      const line = text.slice(offset, nl);
      let record: JournalRecord;
      try {
        record = JSON.parse(line) as JournalRecord;
      } catch {
        const isLast = nl === text.length - 1;
        if (isLast) break;
        throw new Error(
          `${this.journalPath}: corrupt record at byte ${goodBytes}; the task hub cannot be recovered`,
        );
      }
      if (record.seq > snapshotSeq) {
        for (const op of record.ops) this.apply(op);
        this.seq = record.seq;
      }
      offset = nl + 1;
      goodBytes += Buffer.byteLength(line) + 1;
    }
    this.fd = fs.openSync(this.journalPath, "a");
    const size = fs.fstatSync(this.fd).size;
    if (size !== goodBytes) fs.ftruncateSync(this.fd, goodBytes);
    this.journalBytes = goodBytes;
  }

  private apply(op: StoreOp): void {
    switch (op.k) {
      case "putInstance":
        this.instances.set(op.r.instanceId, op.r);
        return;
      case "patchInstance": {
        // A patch of a record that is gone (purged) changes nothing; failing here would make the hub
        // unrecoverable, since recovery replays the same record.
        const r = this.instances.get(op.id);
        if (!r) return;
        if (op.set) applyPatch(r as unknown as Record<string, unknown>, op.set);
        if (op.resetHistory) r.history = [];
        if (op.append) r.history.push(...op.append);
        if (op.appendActions) r.prevActions.push(...op.appendActions);
        if (op.consume) r.inbox.splice(0, op.consume);
        if (op.replaceInbox) r.inbox = op.replaceInbox;
        if (op.deliver) r.inbox.push(...op.deliver);
        return;
      }
      case "deleteInstance":
        this.instances.delete(op.id);
        return;
      case "putEntity":
        this.entities.set(op.r.schedulerId, op.r);
        return;
      case "patchEntity": {
        const e = this.entities.get(op.id);
        if (!e) return;
        if (op.set) applyPatch(e as unknown as Record<string, unknown>, op.set);
        if (op.consume) e.queue.splice(0, op.consume);
        if (op.enqueue) e.queue.push(...op.enqueue);
        return;
      }
    }
  }
}

function applyPatch(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete target[key];
    else if (value !== undefined) target[key] = value;
  }
}
