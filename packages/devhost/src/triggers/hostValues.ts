// Values of a trigger's binding data as the host puts them on the wire to the worker. The host sends a string as a
// string and almost everything else as JSON written by Newtonsoft.Json with its default settings
// (GrpcMessageConversionExtensions.ToRpc, ToRpcDefault): an int or a long as a JSON number, a DateTime or a
// DateTimeOffset as a JSON string in Newtonsoft's ISO form. @azure/functions parses every one of them back; it also
// tries each plain string as JSON and keeps the text when that fails, which costs a thrown SyntaxError per string.

/** A moment as a Date, or undefined when `value` is none. */
function asDate(value: unknown): Date | undefined {
  if (value instanceof Date) return value;
  if (typeof value === "string" || typeof value === "number") return new Date(value);
  return undefined;
}

/** Newtonsoft's round-trip text of a UTC moment: seconds, then up to seven fraction digits with trailing zeros cut. */
function newtonsoftText(date: Date, offset: "" | "+00:00"): string {
  const iso = date.toISOString(); // 2026-12-03T09:48:57.120Z
  const seconds = iso.slice(0, 19);
  const fraction = iso.slice(20, 23).replace(/0+$/, "");
  return `${seconds}${fraction ? `.${fraction}` : ""}${offset}`;
}

/**
 * A DateTime taken from a DateTimeOffset (`.DateTime`, as the Service Bus extension's `EnqueuedTimeUtc` and
 * `ExpiresAtUtc` are): its Kind is Unspecified, so Newtonsoft writes it with no zone at all.
 */
export function dotnetDateTime(value: unknown): string | undefined {
  const date = asDate(value);
  return date && !Number.isNaN(date.getTime()) ? newtonsoftText(date, "") : undefined;
}

/** A DateTimeOffset at UTC (`EnqueuedTime`, `ExpiresAt`): Newtonsoft writes the offset as +00:00. */
export function dotnetDateTimeOffset(value: unknown): string | undefined {
  const date = asDate(value);
  return date && !Number.isNaN(date.getTime()) ? newtonsoftText(date, "+00:00") : undefined;
}

/** A value JSON can carry: a bigint (an AMQP long) as its decimal text. */
export function jsonSafe(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v)),
  ) as unknown;
}
