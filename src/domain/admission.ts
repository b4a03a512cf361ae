import { z } from "zod";
import { isoTimestamp } from "./validation";
import { parseInstanceId } from "./ids";
import { isLocked, type StateRecord } from "./stateRecord";

/**
 * Admission by places: MAX_IN_FLIGHT places, kept as entries in a few shard documents of the `leases` container
 * (`admission:<k>`, each its own logical partition), taken and given back by conditional replace on `_etag`. An
 * attempt takes a place in a shard before its claim and gives it back after the write that ends its lock, so at
 * every moment each locked record has an entry naming its attempt, and no shard holds more entries than its
 * capacity: locked records ≤ entries ≤ MAX_IN_FLIGHT, with no document that every claim writes and no count query.
 * docs/architecture.md#admission-control says why it stays strict under races and crashes.
 */
export const ADMISSION = {
  /** Places per shard document: few enough that a shard stays small (about 250 bytes per entry) and its writers
   * few (every take and give-back of its places); many enough that a round finds room in one or two reads. */
  placesPerShard: 25,
  /** Shards a round reads at most, besides the one it gives a place back to: the cost of a round stays flat
   * however many shards there are (4,000 at MAX_IN_FLIGHT 100,000), at the price of sometimes missing room
   * elsewhere until the next round. */
  shardsPerRound: 4,
  /** Attempts a round claims at most, whatever the room: one round's writes stay bounded. */
  claimsPerRound: 100,
  /** How long an instance trusts the version of a shard it read or wrote itself when looking for room (ms). */
  trustMs: 1_000,
  /** How long after the write that ended an attempt's lock its give-back may still be on its way (ms): it follows
   * the write at once, but a throttled store holds it while the SDK retries (up to 30 s by default). */
  giveBackGraceMs: 30_000,
} as const;

export const ADMISSION_SHARD_PREFIX = "admission:";
export const admissionShardId = (shard: number): string => `${ADMISSION_SHARD_PREFIX}${shard}`;

/** One place, held by one attempt. */
export const placeEntrySchema = z.strictObject({
  /** The attempt: its orchestration instance id, which becomes the record's lockedBy when the claim succeeds. */
  holder: z.string().min(1),
  /**
   * This one take: two claimers may take a place for the same attempt at once (they read the same due record), and
   * the one whose claim does not land must give back its own entry, not the other's.
   */
  ticket: z.string().min(1),
  orderId: z.string().min(1),
  /** The record's `_etag` the claim is conditional on: while the record still has it, the claim may yet land. */
  recordEtag: z.string().min(1),
  takenAt: isoTimestamp,
  /** Until then nobody looks at the entry; after it, a round checks whether its attempt still holds the record. */
  checkAfter: isoTimestamp,
});
export type PlaceEntry = z.infer<typeof placeEntrySchema>;

export const admissionShardSchema = z.looseObject({
  id: z.string().startsWith(ADMISSION_SHARD_PREFIX),
  /** The `leases` container's partition key: the document's own id. */
  orderId: z.string().startsWith(ADMISSION_SHARD_PREFIX),
  shard: z.number().int().nonnegative(),
  entries: z.array(placeEntrySchema),
  updatedAt: isoTimestamp,
  _etag: z.string().optional(),
});
export type AdmissionShard = z.infer<typeof admissionShardSchema>;

/** How many shards MAX_IN_FLIGHT places make. */
export function shardCount(maxInFlight: number, placesPerShard: number = ADMISSION.placesPerShard): number {
  return Math.max(1, Math.ceil(maxInFlight / placesPerShard));
}

/** The places of shard `k`: the first shards get one more when MAX_IN_FLIGHT does not divide evenly. */
export function shardCapacity(
  shard: number,
  maxInFlight: number,
  placesPerShard: number = ADMISSION.placesPerShard,
): number {
  const shards = shardCount(maxInFlight, placesPerShard);
  if (shard >= shards) return 0;
  return Math.floor(maxInFlight / shards) + (shard < maxInFlight % shards ? 1 : 0);
}

export const emptyShard = (shard: number, now: Date): AdmissionShard => ({
  id: admissionShardId(shard),
  orderId: admissionShardId(shard),
  shard,
  entries: [],
  updatedAt: now.toISOString(),
});

/** Free places of a shard (never negative: a shard may hold more than a lowered MAX_IN_FLIGHT allows). */
export const freePlaces = (shard: AdmissionShard, capacity: number): number =>
  Math.max(0, capacity - shard.entries.length);

/** The entries due for a check: their attempt may have ended without giving its place back (a crash). */
export const entriesToCheck = (shard: AdmissionShard, now: Date): PlaceEntry[] =>
  shard.entries.filter((e) => e.checkAfter <= now.toISOString());

/**
 * What an entry due for a check means, given its record as read now:
 * - `held`: its attempt holds the record (or its claim may yet land: `fence` decides that), so the place is taken;
 * - `free`: its attempt does not hold the record and never can (the record changed since the entry was taken,
 *   so a claim conditional on the old etag fails), or the record is gone;
 * - `fence`: its attempt does not hold the record, but the record is still the version the claim is conditional
 *   on, so a claimer that paused after taking the place could still land it; the checker must first change the
 *   record (a conditional write of the same version), then the place is free.
 */
export function entryVerdict(entry: PlaceEntry, record: StateRecord | undefined): "held" | "free" | "fence" {
  if (!record) return "free";
  if (record.lockedBy === entry.holder) return "held";
  return record._etag === entry.recordEtag ? "fence" : "free";
}

/**
 * Whether a place found free at its check may simply not have been given back yet, rather than lost: its attempt's
 * lock ended less than ADMISSION.giveBackGraceMs ago, as the record's history shows (the first entry of that
 * attempt into a state that holds no lock), and the instance that wrote that end gives the place back right after
 * it. Otherwise (the lock ended long before, the attempt never held the record, or the history no longer shows it)
 * the give-back was due long ago, and only a crash between the two writes explains its absence.
 */
export function mayStillBeGivenBack(entry: PlaceEntry, record: StateRecord | undefined, now: Date): boolean {
  const attempt = parseInstanceId(entry.holder);
  if (!record || attempt?.orderId !== record.orderId) return false;
  const ended = record.history.find((h) => h.attempt === attempt.attempt && !isLocked(h.to));
  return ended !== undefined && now.getTime() - Date.parse(ended.at) < ADMISSION.giveBackGraceMs;
}

/**
 * When a held entry is next checked: after its attempt's current deadline, when the Supervisor would expire the
 * attempt (and that write gives the place back), or a claim timeout from now if the deadline already passed.
 */
export function nextCheck(record: StateRecord, now: Date, claimTimeoutSeconds: number): string {
  const later = new Date(now.getTime() + claimTimeoutSeconds * 1000).toISOString();
  return record.completeBy !== null && record.completeBy > later ? record.completeBy : later;
}

/**
 * The shard with `take` added, and without the entries of the attempts in `ended` (their lock ended: every entry
 * naming them is obsolete) or the takes in `tickets` (claims that did not land, entries found free), and with new
 * checkAfter times by ticket; undefined when `take` does not fit.
 */
export function updateShard(
  shard: AdmissionShard,
  change: {
    take?: readonly PlaceEntry[];
    ended?: ReadonlySet<string>;
    tickets?: ReadonlySet<string>;
    recheck?: ReadonlyMap<string, string>;
  },
  capacity: number,
  now: Date,
): AdmissionShard | undefined {
  const kept = shard.entries
    .filter((e) => !change.ended?.has(e.holder) && !change.tickets?.has(e.ticket))
    .map((e) => {
      const checkAfter = change.recheck?.get(e.ticket);
      return checkAfter ? { ...e, checkAfter } : e;
    });
  const take = change.take ?? [];
  if (take.length > 0 && kept.length + take.length > capacity) return undefined;
  return { ...shard, entries: [...kept, ...take], updatedAt: now.toISOString() };
}
