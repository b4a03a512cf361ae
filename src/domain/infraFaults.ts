/**
 * Faults of the app's own infrastructure, the state store and the bus, as the instances saw them (each fault that
 * got past the retries inside a call: src/resilience/infraResilience.ts). They matter to the Supervisor: an attempt that
 * expired while the app could not send its requests or record the answers did not fail because of the order or
 * its services, so, like an attempt that met a downstream outage (transitions/outage.ts), it does not count
 * against the order's failures, for at most OUTAGE_MAX_SECONDS. Faults close together (less than
 * EPISODE_GAP_SECONDS apart) are one episode; an episode that lasts ALERT_AFTER_SECONDS is one alert.
 */
import { z } from "zod";
import { isoTimestamp } from "./validation";

export const INFRA_PARTS = ["store", "bus"] as const;
export type InfraPart = (typeof INFRA_PARTS)[number];

export const INFRA_FAULTS = {
  /** The shared record's id (and partition key) in the `leases` container. */
  recordId: "infra-faults",
  /** Faults less than this far apart are one episode. */
  episodeGapSeconds: 60,
  /** An episode that has lasted this long raises its one InfrastructureUnavailable alert. */
  alertAfterSeconds: 60,
} as const;

export const infraEpisodeSchema = z.strictObject({
  since: isoTimestamp,
  lastAt: isoTimestamp,
  /** The latest fault, in one line (infraResilience.describeInfraError). */
  detail: z.string(),
  /** When its alert was decided; null until the episode lasted long enough. */
  alertedAt: isoTimestamp.nullable(),
  /** When that alert went out; a decided alert not yet sent (the bus being what failed) is sent by a later sweep. */
  alertSentAt: isoTimestamp.nullable().default(null),
});
export type InfraEpisode = z.infer<typeof infraEpisodeSchema>;

export const infraFaultRecordSchema = z.looseObject({
  id: z.literal(INFRA_FAULTS.recordId),
  orderId: z.literal(INFRA_FAULTS.recordId),
  store: infraEpisodeSchema.nullable(),
  bus: infraEpisodeSchema.nullable(),
  _etag: z.string().optional(),
});
export type InfraFaultRecord = z.infer<typeof infraFaultRecordSchema>;

export function emptyInfraFaultRecord(): InfraFaultRecord {
  return { id: INFRA_FAULTS.recordId, orderId: INFRA_FAULTS.recordId, store: null, bus: null };
}

const gapMs = INFRA_FAULTS.episodeGapSeconds * 1000;

/** The episode with one more fault at `at`: the same one when the last fault was less than the gap before. */
export function noteFault(episode: InfraEpisode | null, at: Date, detail: string): InfraEpisode {
  const when = at.toISOString();
  if (episode && at.getTime() - Date.parse(episode.lastAt) < gapMs) {
    return when > episode.lastAt ? { ...episode, lastAt: when, detail } : episode;
  }
  return { since: when, lastAt: when, detail, alertedAt: null, alertSentAt: null };
}

/**
 * Two instances' views of one part joined: overlapping episodes (or ones less than the gap apart) are one, the
 * later one otherwise. An alert decided in either stays decided.
 */
export function mergeEpisodes(a: InfraEpisode | null, b: InfraEpisode | null): InfraEpisode | null {
  if (!a || !b) return a ?? b;
  const [early, late] = a.since <= b.since ? [a, b] : [b, a];
  if (Date.parse(late.since) - Date.parse(early.lastAt) >= gapMs) return late;
  const newest = early.lastAt >= late.lastAt ? early : late;
  return {
    since: early.since,
    lastAt: newest.lastAt,
    detail: newest.detail,
    alertedAt: early.alertedAt ?? late.alertedAt,
    alertSentAt: early.alertSentAt ?? late.alertSentAt,
  };
}

/** The record with `local`'s episodes merged in. */
export function mergeInfraFaults(
  record: InfraFaultRecord,
  local: Record<InfraPart, InfraEpisode | null>,
): InfraFaultRecord {
  return {
    ...record,
    store: mergeEpisodes(record.store, local.store),
    bus: mergeEpisodes(record.bus, local.bus),
  };
}

/** A part of the app's infrastructure that failed at or after `from`, with what it said last; else undefined. */
export function faultSince(
  episodes: Record<InfraPart, InfraEpisode | null>,
  from: Date,
): { part: InfraPart; detail: string } | undefined {
  const since = from.toISOString();
  for (const part of INFRA_PARTS) {
    const episode = episodes[part];
    if (episode && episode.lastAt >= since) return { part, detail: episode.detail };
  }
  return undefined;
}

/** Is the episode still going on at `now` and long enough for its alert, which is not decided yet? */
export function infraAlertDue(episode: InfraEpisode | null, now: Date): boolean {
  if (!episode || episode.alertedAt !== null) return false;
  const lasted = Date.parse(episode.lastAt) - Date.parse(episode.since);
  return (
    lasted >= INFRA_FAULTS.alertAfterSeconds * 1000 && now.getTime() - Date.parse(episode.lastAt) < gapMs
  );
}

/** Was the episode's alert decided and not yet sent? */
export function infraAlertUnsent(episode: InfraEpisode | null): boolean {
  return episode !== null && episode.alertedAt !== null && episode.alertSentAt === null;
}

/** The one alert of an episode: its MessageId is the episode's, so a resend is dropped by duplicate detection. */
export function infraAlertMessageId(part: InfraPart, episode: InfraEpisode): string {
  return `infra:${part}:${episode.since}`;
}
