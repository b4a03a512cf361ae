import { randomUUID } from "node:crypto";
import type { Container } from "@azure/cosmos";
import {
  ADMISSION,
  claimedBy,
  admissionShardId,
  admissionShardSchema,
  emptyShard,
  entriesToCheck,
  entryVerdict,
  freePlaces,
  mayStillBeGivenBack,
  nextCheck,
  shardCapacity,
  shardCount,
  updateShard,
  type AdmissionShard,
  type PlaceEntry,
  type StateRecord,
} from "../domain";
import { cosmosStatus } from "../store/cosmosErrors";
import { withSystemProperties } from "../store/writeEcho";
import type { Logger } from "../telemetry/logger";
import type { StateStore } from "../store/stateStore";

/** A shard a round read, with the places it has free. */
export interface Room {
  shard: AdmissionShard;
  capacity: number;
  free: number;
}

/** A record a round placed: its attempt holds an entry in `shard`, taken before its claim. */
export interface Placed {
  record: StateRecord;
  shard: number;
  ticket: string;
}

/** Places given back in one write: the attempts' holders that ended, and the tickets of claims that did not land. */
interface GiveBackBatch {
  ended: Set<string>;
  tickets: Set<string>;
  /** Settles once the batch's write was made (or left to the check). */
  written: Promise<void>;
}

/** Lost write races on one shard before a give-back is left to the check (it is only late then, never lost). */
const MAX_SHARD_RACES = 8;

export interface AdmissionOptions {
  maxInFlight: number;
  claimTimeoutSeconds: number;
  /** Point reads and the fence write of the entries a round checks. */
  states: Pick<StateStore, "get" | "fence">;
  now(): Date;
  /** Picks the shards a round reads; any uniform source will do (not part of any decision's safety). */
  random?: () => number;
}

/**
 * The admission places in Cosmos DB (src/domain/admission.ts has the rules): reads shards, takes places before
 * claims, gives them back after the write that ends an attempt's lock, and checks entries whose attempt may have
 * ended without giving back (a crash between the two writes).
 */
export class AdmissionPlaces {
  /** The version of each shard this instance last read or wrote: a give-back replaces it without reading first. */
  private readonly known = new Map<number, AdmissionShard>();
  /** When (performance.now()) each known version was read or written here. */
  private readonly knownAt = new Map<number, number>();
  /** Shards this instance gave places back to lately: the next round looks there first. */
  private readonly freedLately = new Set<number>();
  /** This instance's write to each shard in progress: its writes to one shard go one at a time (`exclusively`). */
  private readonly writing = new Map<number, Promise<unknown>>();
  /** Give-backs to each shard waiting for the write in progress there: the next write makes them all at once. */
  private readonly waitingGiveBacks = new Map<number, GiveBackBatch>();
  private readonly random: () => number;

  constructor(
    private readonly container: Container,
    private readonly options: AdmissionOptions,
  ) {
    this.random = options.random ?? Math.random;
  }

  get shards(): number {
    return shardCount(this.options.maxInFlight);
  }

  capacity(shard: number): number {
    return shardCapacity(shard, this.options.maxInFlight);
  }

  /** The shard as stored, or an empty one (without `_etag`) before its first write. */
  async read(shard: number): Promise<AdmissionShard> {
    const id = admissionShardId(shard);
    const { resource } = await this.container.item(id, id).read();
    const current = resource ? admissionShardSchema.parse(resource) : emptyShard(shard, this.options.now());
    this.remember(shard, current);
    return current;
  }

  private remember(shard: number, version: AdmissionShard): void {
    this.known.set(shard, version);
    this.knownAt.set(shard, performance.now());
  }

  /**
   * The version this instance read or wrote within ADMISSION.trustMs, else a fresh read. For finding room only: a
   * copy that shows too little room costs a place for a moment, one that shows too much costs a lost race on the
   * take, which reads again; neither can spend a place twice, since the take is a conditional write.
   */
  private async recent(shard: number): Promise<AdmissionShard> {
    const known = this.known.get(shard);
    const at = this.knownAt.get(shard);
    if (known && at !== undefined && performance.now() - at <= ADMISSION.trustMs) return known;
    return this.read(shard);
  }

  /** Writes `next` over `read` (create when it was never written); undefined when another writer came first. */
  private async write(read: AdmissionShard, next: AdmissionShard): Promise<AdmissionShard | undefined> {
    try {
      const { resource } = read._etag
        ? await this.container
            .item(read.id, read.id)
            .replace(next, { accessCondition: { type: "IfMatch", condition: read._etag } })
        : await this.container.items.create(next);
      // What was sent is a shard this instance made (updateShard): only the store's system properties are new.
      const written = withSystemProperties(next, resource, `admission shard ${read.id}`);
      this.remember(read.shard, written);
      return written;
    } catch (error) {
      const status = cosmosStatus(error);
      if (status === 412 || status === 409 || status === 404) {
        this.known.delete(read.shard);
        return undefined;
      }
      throw error;
    }
  }

  /**
   * Runs `write` once this instance's earlier writes to `shard` have ended. Writes of one instance to one shard
   * would otherwise race each other (a round's take, the give-backs of the attempts ending at that moment): all but
   * one would lose to the conditional write and read again. In turn, each starts from the version the last one
   * wrote. Instances still race each other; the conditional write keeps that safe.
   */
  private async exclusively<T>(shard: number, write: () => Promise<T>): Promise<T> {
    const before = this.writing.get(shard) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(write);
    this.writing.set(shard, mine);
    try {
      return await mine;
    } finally {
      if (this.writing.get(shard) === mine) this.writing.delete(shard);
    }
  }

  /** The newest version of `shard` this instance knows, `read` when it knows none newer. */
  private newest(read: AdmissionShard): AdmissionShard {
    return this.known.get(read.shard) ?? read;
  }

  /**
   * Reads the shards a round may use: those given back to lately first, then others at random,
   * ADMISSION.shardsPerRound in all (more when it gave back to several lately), stopping once `wanted` places are
   * found. Entries due for a check are checked on the way (crash repair), so a place whose attempt ended without
   * giving it back is found free.
   */
  async findRoom(wanted: number, log: Logger): Promise<Room[]> {
    const order = this.visitOrder();
    const rooms: Room[] = [];
    let free = 0;
    for (const shard of order) {
      if (free >= wanted) break;
      const capacity = this.capacity(shard);
      let current = await this.recent(shard);
      if (entriesToCheck(current, this.options.now()).length > 0)
        current = (await this.checkEntries(current, log)) ?? (await this.read(shard));
      const room = { shard: current, capacity, free: freePlaces(current, capacity) };
      free += room.free;
      if (room.free > 0) rooms.push(room);
    }
    return rooms;
  }

  private visitOrder(): number[] {
    const shards = this.shards;
    const first = [...this.freedLately].filter((s) => s < shards);
    this.freedLately.clear();
    const others = Array.from({ length: shards }, (_, s) => s).filter((s) => !first.includes(s));
    const picked = Math.min(
      others.length,
      Math.max(first.length, 1) + ADMISSION.shardsPerRound - 1 - first.length,
    );
    // The first `picked` steps of a Fisher-Yates shuffle: as uniform a choice as the whole shuffle, and a round
    // draws a few random numbers however many shards MAX_IN_FLIGHT makes.
    for (let i = 0; i < picked; i++) {
      const j = i + Math.floor(this.random() * (others.length - i));
      [others[i], others[j]] = [others[j]!, others[i]!];
    }
    return [...first, ...others.slice(0, picked)];
  }

  /**
   * Takes one place per record, filling the rooms in turn: one conditional write per shard. A shard that changed
   * since it was read is read again and filled with what still fits. Returns the records that got a place.
   */
  async take(rooms: readonly Room[], records: readonly StateRecord[]): Promise<Placed[]> {
    const placed: Placed[] = [];
    let next = 0;
    for (const room of rooms) {
      if (next >= records.length) break;
      await this.exclusively(room.shard.shard, async () => {
        // A give-back of this instance may have written the shard since the round read it.
        let current = this.newest(room.shard);
        for (let race = 0; race < MAX_SHARD_RACES; race++) {
          const now = this.options.now();
          const fits = Math.min(freePlaces(current, room.capacity), records.length - next);
          if (fits === 0) return;
          const batch = records.slice(next, next + fits);
          const entries = batch.map((record) => this.entryFor(record, now));
          const written = await this.write(
            current,
            updateShard(current, { take: entries }, room.capacity, now)!,
          );
          if (written) {
            placed.push(
              ...entries.map((entry, i) => ({
                record: batch[i]!,
                shard: current.shard,
                ticket: entry.ticket,
              })),
            );
            next += fits;
            return;
          }
          current = await this.read(current.shard);
        }
      });
    }
    return placed;
  }

  private entryFor(record: StateRecord, now: Date): PlaceEntry {
    if (!record._etag)
      throw new Error(`record ${record.orderId} has no _etag: a place is taken for a read record`);
    return {
      holder: claimedBy(record),
      ticket: randomUUID(),
      orderId: record.orderId,
      recordEtag: record._etag,
      takenAt: now.toISOString(),
      checkAfter: new Date(now.getTime() + this.options.claimTimeoutSeconds * 1000).toISOString(),
    };
  }

  /**
   * Gives back places in `shard`: every entry of the attempts in `ended`, after the write that ended their lock, or
   * the takes in `tickets`, for claims that did not land. Starts from the version this instance knows; a lost race
   * re-reads. Should it fail even so, the entry is checked when its checkAfter passes and found free then: a place
   * is late, never lost.
   */
  async giveBack(
    shard: number,
    which: { ended?: readonly string[]; tickets?: readonly string[] },
  ): Promise<void> {
    // Give-backs that come while this instance writes the shard wait, and go in its next write together.
    let batch = this.waitingGiveBacks.get(shard);
    if (!batch) {
      const opened: GiveBackBatch = { ended: new Set(), tickets: new Set(), written: Promise.resolve() };
      this.waitingGiveBacks.set(shard, opened);
      opened.written = this.exclusively(shard, async () => {
        // Closed: a give-back from now on opens the next batch.
        if (this.waitingGiveBacks.get(shard) === opened) this.waitingGiveBacks.delete(shard);
        await this.giveBackNow(shard, opened);
      });
      batch = opened;
    }
    for (const holder of which.ended ?? []) batch.ended.add(holder);
    for (const ticket of which.tickets ?? []) batch.tickets.add(ticket);
    await batch.written;
  }

  private async giveBackNow(shard: number, change: GiveBackBatch): Promise<void> {
    const concerned = (s: AdmissionShard) =>
      s.entries.some((e) => change.ended.has(e.holder) || change.tickets.has(e.ticket));
    const cached = this.known.get(shard);
    let current = cached ?? (await this.read(shard));
    // A cached copy may predate the entry (another instance took it): only a fresh read may say it is gone.
    if (!concerned(current) && cached) current = await this.read(shard);
    for (let race = 0; race < MAX_SHARD_RACES && concerned(current); race++) {
      const next = updateShard(current, change, this.capacity(shard), this.options.now())!;
      if (await this.write(current, next)) {
        this.freedLately.add(shard);
        return;
      }
      current = await this.read(shard);
    }
  }

  /**
   * Checks the entries of `shard` whose checkAfter passed: a place whose attempt holds its record is kept (checked
   * again after the attempt's deadline), one whose attempt ended or never claimed is given back, after fencing
   * the record when the claim could still land. Returns the shard as written, or undefined on a lost race.
   *
   * A place found free is not proof of a crash: the write that ended its attempt's lock may have landed a moment
   * ago, its give-back a few milliseconds behind (a round checks an attempt's place at its deadline, which is when the
   * Supervisor ends it). Freeing it here is harmless (the give-back then finds nothing to do), but only a place whose
   * give-back was due long ago is reported as lost, and only once this write has freed it: a lost race means
   * another writer (that very give-back, often) changed the shard first.
   */
  private async checkEntries(shard: AdmissionShard, log: Logger): Promise<AdmissionShard | undefined> {
    const now = this.options.now();
    const tickets = new Set<string>();
    const lost: string[] = [];
    const late: string[] = [];
    const recheck = new Map<string, string>();
    for (const entry of entriesToCheck(shard, now)) {
      const record = await this.options.states.get(entry.orderId);
      const verdict = entryVerdict(entry, record);
      if (verdict === "held")
        recheck.set(entry.ticket, nextCheck(record!, now, this.options.claimTimeoutSeconds));
      else if (verdict === "free" || (await this.options.states.fence(record!))) {
        tickets.add(entry.ticket);
        (mayStillBeGivenBack(entry, record, now) ? late : lost).push(entry.holder);
      }
    }
    const written = await this.write(
      shard,
      updateShard(shard, { tickets, recheck }, this.capacity(shard.shard), now)!,
    );
    const id = admissionShardId(shard.shard);
    if (written && lost.length > 0)
      log.warn(
        `admission: ${id}: ${lost.length} place(s) whose attempt ended without giving it back (a crash between ` +
          `two writes): ${lost.join(", ")}`,
      );
    if (written && late.length > 0)
      log.log(
        `admission: ${id}: freed ${late.length} place(s) whose attempt ended moments ago, before its give-back ` +
          `landed: ${late.join(", ")}`,
      );
    return written;
  }
}
