/**
 * Strict ISO-8601 durations as the Service Bus Config.json writes them (`PT1M`, `P14D`, `PT0.5S`,
 * `P10675199DT2H48M5.4775807S`). Years, months and weeks are refused: years and months have no fixed
 * length, and Service Bus (a .NET TimeSpan underneath) would silently read them as 365 and 30 days.
 */
const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

const MS_PER = { day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1_000 } as const;

export class DurationSyntaxError extends Error {
  override name = "DurationSyntaxError";
}

/** Parses an ISO-8601 duration into milliseconds, or throws a DurationSyntaxError saying what is wrong. */
export function parseIsoDuration(text: string): number {
  const match = DURATION.exec(text);
  // The pattern alone also accepts "P", "PT" and "P1DT": a designator with no component after it.
  if (!match || text === "P" || text.endsWith("T")) {
    const datePart = text.startsWith("P") ? (text.slice(1).split("T")[0] ?? "") : "";
    if (/\d[YMW]/.test(datePart)) {
      throw new DurationSyntaxError(
        `"${text}" uses years, months or weeks, which have no fixed length; write days instead (e.g. P14D)`,
      );
    }
    throw new DurationSyntaxError(
      `"${text}" is not an ISO-8601 duration (expected e.g. PT1M, PT0.5S, P14D, P1DT12H)`,
    );
  }
  const [, days, hours, minutes, seconds] = match;
  const ms =
    Number(days ?? 0) * MS_PER.day +
    Number(hours ?? 0) * MS_PER.hour +
    Number(minutes ?? 0) * MS_PER.minute +
    Math.round(Number(seconds ?? 0) * MS_PER.second);
  if (!Number.isSafeInteger(ms)) throw new DurationSyntaxError(`"${text}" is too long to represent`);
  return ms;
}
