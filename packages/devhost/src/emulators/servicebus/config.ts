/**
 * The queues the emulator serves, read from a file in the official Service Bus emulator's Config.json
 * format, so that one file configures both (UserConfig.Namespaces[].Queues[].Properties).
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { DurationSyntaxError, parseIsoDuration } from "./duration";

const MAX_LOCK_DURATION_MS = 5 * 60_000; // Service Bus caps LockDuration at 5 minutes.
const MAX_DUPLICATE_WINDOW_MS = 7 * 86_400_000; // ...and the duplicate detection window at 7 days.

/** Service Bus entity names: letters, digits, '.', '-', '_' and '/', starting and ending with a letter or digit. */
const QUEUE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._\-/]{0,258}[A-Za-z0-9])?$/;

/**
 * A duration property. The bounds are Service Bus's upper limits; the lower ones are relaxed to "more
 * than zero", so that tests can use sub-second locks and TTLs instead of sleeping for real ones.
 */
function isoDuration(maxMs?: number) {
  return z.string().superRefine((text, ctx) => {
    let ms: number;
    try {
      ms = parseIsoDuration(text);
    } catch (error) {
      if (!(error instanceof DurationSyntaxError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message });
      return;
    }
    if (ms <= 0) ctx.addIssue({ code: "custom", message: "must be longer than zero" });
    else if (maxMs !== undefined && ms > maxMs) {
      ctx.addIssue({ code: "custom", message: `must be at most ${maxMs / 1000} s (the Service Bus limit)` });
    }
  });
}

const queuePropertiesSchema = z.strictObject({
  DeadLetteringOnMessageExpiration: z.boolean().optional(),
  DefaultMessageTimeToLive: isoDuration().optional(),
  DuplicateDetectionHistoryTimeWindow: isoDuration(MAX_DUPLICATE_WINDOW_MS).optional(),
  ForwardDeadLetteredMessagesTo: z
    .literal("", { error: "auto-forwarding is not supported by this emulator (expected an empty string)" })
    .optional(),
  ForwardTo: z
    .literal("", { error: "auto-forwarding is not supported by this emulator (expected an empty string)" })
    .optional(),
  LockDuration: isoDuration(MAX_LOCK_DURATION_MS).optional(),
  MaxDeliveryCount: z.int().min(1).optional(),
  RequiresDuplicateDetection: z.boolean().optional(),
  RequiresSession: z
    .literal(false, { error: "sessions are not supported by this emulator (expected false)" })
    .optional(),
});

const queueSchema = z.looseObject({
  Name: z.string().regex(QUEUE_NAME, {
    error: "must be 1-260 letters, digits, '.', '-', '_' or '/', starting and ending with a letter or digit",
  }),
  Properties: queuePropertiesSchema.optional(),
});

const namespaceSchema = z.looseObject({
  Name: z.string().min(1),
  Queues: z.array(queueSchema).optional(),
  // Topics are accepted so that a file written for the official emulator still loads; they are not served.
  Topics: z.array(z.unknown()).optional(),
});

const configFileSchema = z
  .looseObject({
    UserConfig: z.looseObject({
      Namespaces: z.array(namespaceSchema).min(1),
      Logging: z.unknown().optional(),
    }),
  })
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.UserConfig.Namespaces.forEach((namespace, n) =>
      namespace.Queues?.forEach((queue, q) => {
        const key = queue.Name.toLowerCase(); // entity names are case-insensitive
        if (seen.has(key)) {
          ctx.addIssue({
            code: "custom",
            path: ["UserConfig", "Namespaces", n, "Queues", q, "Name"],
            message: "is declared twice (queue names are case-insensitive)",
          });
        }
        seen.add(key);
      }),
    );
  });

/** A parsed, validated Config.json; durations stay ISO-8601 strings, exactly as in the file. */
export type EmulatorConfigFile = z.infer<typeof configFileSchema>;
export type QueueProperties = z.infer<typeof queuePropertiesSchema>;

/** One queue's behaviour, with durations in milliseconds (Infinity = never). */
export interface QueueSettings {
  name: string;
  lockDurationMs: number;
  maxDeliveryCount: number;
  requiresDuplicateDetection: boolean;
  duplicateDetectionWindowMs: number;
  defaultMessageTimeToLiveMs: number;
  deadLetteringOnMessageExpiration: boolean;
}

/** What the emulator serves when it is given no config: one namespace without queues. */
export const EMPTY_CONFIG: EmulatorConfigFile = {
  UserConfig: { Namespaces: [{ Name: "sbemulatorns", Queues: [] }] },
};

/** Service Bus's own defaults for a property the file leaves out. */
export const QUEUE_DEFAULTS: Omit<QueueSettings, "name"> = {
  lockDurationMs: 60_000,
  maxDeliveryCount: 10,
  requiresDuplicateDetection: false,
  duplicateDetectionWindowMs: 10 * 60_000,
  defaultMessageTimeToLiveMs: Infinity,
  deadLetteringOnMessageExpiration: false,
};

export class EmulatorConfigError extends Error {
  override name = "EmulatorConfigError";
}

/**
 * Reads and validates a Config.json: a file path, JSON text, or an already parsed object. Every problem
 * is reported at once, each naming the queue, the property and the offending value.
 */
export function loadEmulatorConfig(pathOrJson: unknown, source?: string): EmulatorConfigFile {
  let raw: unknown = pathOrJson;
  let origin = source ?? "config object";
  if (typeof pathOrJson === "string") {
    const inline = pathOrJson.trimStart().startsWith("{");
    origin = source ?? (inline ? "inline JSON" : pathOrJson);
    let text = pathOrJson;
    if (!inline) {
      try {
        text = readFileSync(pathOrJson, "utf8");
      } catch (error) {
        throw new EmulatorConfigError(
          `Cannot read the Service Bus emulator config ${origin}: ${String(error)}`,
        );
      }
    }
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new EmulatorConfigError(
        `The Service Bus emulator config ${origin} is not valid JSON: ${String(error)}`,
      );
    }
  }
  const result = configFileSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `  - ${describeIssue(raw, issue)}`);
  throw new EmulatorConfigError(`Invalid Service Bus emulator config (${origin}):\n${problems.join("\n")}`);
}

/** The queues of every namespace in the file, with defaults applied and durations in milliseconds. */
export function queueSettingsOf(file: EmulatorConfigFile): QueueSettings[] {
  return file.UserConfig.Namespaces.flatMap((namespace) =>
    (namespace.Queues ?? []).map((queue): QueueSettings => {
      const p = queue.Properties ?? {};
      const ms = (text: string | undefined, fallback: number) =>
        text === undefined ? fallback : parseIsoDuration(text);
      return {
        name: queue.Name,
        lockDurationMs: ms(p.LockDuration, QUEUE_DEFAULTS.lockDurationMs),
        maxDeliveryCount: p.MaxDeliveryCount ?? QUEUE_DEFAULTS.maxDeliveryCount,
        requiresDuplicateDetection: p.RequiresDuplicateDetection ?? QUEUE_DEFAULTS.requiresDuplicateDetection,
        duplicateDetectionWindowMs: ms(
          p.DuplicateDetectionHistoryTimeWindow,
          QUEUE_DEFAULTS.duplicateDetectionWindowMs,
        ),
        defaultMessageTimeToLiveMs: ms(p.DefaultMessageTimeToLive, QUEUE_DEFAULTS.defaultMessageTimeToLiveMs),
        deadLetteringOnMessageExpiration:
          p.DeadLetteringOnMessageExpiration ?? QUEUE_DEFAULTS.deadLetteringOnMessageExpiration,
      };
    }),
  );
}

/** Names of the topics a file declares; the emulator serves none of them and says so. */
export function declaredTopicNames(file: EmulatorConfigFile): string[] {
  return file.UserConfig.Namespaces.flatMap((namespace) =>
    (namespace.Topics ?? []).map((topic, i) => {
      const name = (topic as { Name?: unknown } | null)?.Name;
      return typeof name === "string" ? name : `#${i}`;
    }),
  );
}

type Path = readonly PropertyKey[];

/** `queue "orders" property LockDuration = "PT1X": <what was expected>`, or a dotted path outside queues. */
function describeIssue(raw: unknown, issue: z.core.$ZodIssue): string {
  const path: Path = issue.path;
  const queueAt = path.indexOf("Queues");
  let message = issue.message;
  if (issue.code === "unrecognized_keys") {
    message = `unknown ${issue.keys.length > 1 ? "properties" : "property"} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    if (path.at(-1) === "Properties")
      message += ` (known: ${Object.keys(queuePropertiesSchema.shape).join(", ")})`;
  }
  if (queueAt >= 0 && typeof path[queueAt + 1] === "number") {
    const queuePath = path.slice(0, queueAt + 2);
    const name = valueAt(raw, [...queuePath, "Name"]);
    const queue = typeof name === "string" ? `queue "${name}"` : `queue ${formatPath(queuePath)}`;
    const rest = path.slice(queueAt + 2).filter((key) => key !== "Properties");
    if (rest.length === 0) return `${queue}: ${message}`;
    return `${queue} property ${formatPath(rest)} = ${formatValue(valueAt(raw, path))}: ${message}`;
  }
  if (path.length === 0) return message;
  return `${formatPath(path)} = ${formatValue(valueAt(raw, path))}: ${message}`;
}

function valueAt(raw: unknown, path: Path): unknown {
  let node = raw;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function formatPath(path: Path): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i ? "." : ""}${String(key)}`))
    .join("");
}

function formatValue(value: unknown): string {
  if (value === undefined) return "(missing)";
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
