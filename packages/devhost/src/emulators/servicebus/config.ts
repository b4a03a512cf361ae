/**
 * The queues and topics the emulator serves, read from a file in the official Service Bus emulator's
 * Config.json format, so that one file configures both (UserConfig.Namespaces[].Queues[].Properties,
 * and Topics[] with their Subscriptions[] and each subscription's Rules[]).
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { DurationSyntaxError, parseIsoDuration } from "./duration";
import { compileRule, DEFAULT_RULE, type CompiledRule } from "./subscriptionRules";

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

const entityName = z.string().regex(QUEUE_NAME, {
  error: "must be 1-260 letters, digits, '.', '-', '_' or '/', starting and ending with a letter or digit",
});

const queueSchema = z.looseObject({
  Name: entityName,
  Properties: queuePropertiesSchema.optional(),
});

const topicPropertiesSchema = queuePropertiesSchema.pick({
  DefaultMessageTimeToLive: true,
  DuplicateDetectionHistoryTimeWindow: true,
  RequiresDuplicateDetection: true,
});

/** A subscription's own properties: a queue's, less duplicate detection (that is the topic's). */
const subscriptionPropertiesSchema = queuePropertiesSchema.omit({
  DuplicateDetectionHistoryTimeWindow: true,
  RequiresDuplicateDetection: true,
});

const correlationFilterSchema = z.strictObject({
  ContentType: z.string().optional(),
  CorrelationId: z.string().optional(),
  Label: z.string().optional(),
  MessageId: z.string().optional(),
  ReplyTo: z.string().optional(),
  ReplyToSessionId: z.string().optional(),
  SessionId: z.string().optional(),
  To: z.string().optional(),
  Properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

const sqlExpressionSchema = z.strictObject({ SqlExpression: z.string() });

const ruleSchema = z
  .looseObject({
    Name: z.string().regex(/^[^/\\?#]{1,50}$/, { error: "must be 1-50 characters without / \\ ? #" }),
    Properties: z.strictObject({
      FilterType: z.enum(["Sql", "Correlation"]),
      SqlFilter: sqlExpressionSchema.optional(),
      CorrelationFilter: correlationFilterSchema.optional(),
      Action: sqlExpressionSchema.optional(),
    }),
  })
  .superRefine((rule, ctx) => {
    // A filter or action that does not parse is a start-up error, as Service Bus refuses to create the rule.
    try {
      compileRule(rule);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
    }
  });

const subscriptionSchema = z.looseObject({
  Name: z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,48}[A-Za-z0-9])?$/, {
    error: "must be 1-50 letters, digits, '.', '-' or '_', starting and ending with a letter or digit",
  }),
  Properties: subscriptionPropertiesSchema.optional(),
  Rules: z.array(ruleSchema).optional(),
});

const topicSchema = z.looseObject({
  Name: entityName,
  Properties: topicPropertiesSchema.optional(),
  Subscriptions: z.array(subscriptionSchema).optional(),
});

const namespaceSchema = z.looseObject({
  Name: z.string().min(1),
  Queues: z.array(queueSchema).optional(),
  Topics: z.array(topicSchema).optional(),
});

/** Adds an issue for every name seen before (case-insensitively, as Service Bus compares entity names). */
function refuseDuplicates(
  ctx: z.RefinementCtx,
  names: { name: string; path: PropertyKey[] }[],
  what: string,
): void {
  const seen = new Set<string>();
  for (const { name, path } of names) {
    const key = name.toLowerCase();
    if (seen.has(key)) {
      ctx.addIssue({ code: "custom", path: [...path, "Name"], message: `is declared twice (${what})` });
    }
    seen.add(key);
  }
}

const configFileSchema = z
  .looseObject({
    UserConfig: z.looseObject({
      Namespaces: z.array(namespaceSchema).min(1),
      Logging: z.unknown().optional(),
    }),
  })
  .superRefine((file, ctx) => {
    const entities = file.UserConfig.Namespaces.flatMap((namespace, n) => [
      ...(namespace.Queues ?? []).map((queue, q) => ({
        name: queue.Name,
        path: ["UserConfig", "Namespaces", n, "Queues", q],
      })),
      ...(namespace.Topics ?? []).map((topic, t) => ({
        name: topic.Name,
        path: ["UserConfig", "Namespaces", n, "Topics", t],
      })),
    ]);
    refuseDuplicates(ctx, entities, "queue and topic names share one namespace and are case-insensitive");
    file.UserConfig.Namespaces.forEach((namespace, n) =>
      namespace.Topics?.forEach((topic, t) => {
        const topicPath = ["UserConfig", "Namespaces", n, "Topics", t];
        const subscriptions = topic.Subscriptions ?? [];
        refuseDuplicates(
          ctx,
          subscriptions.map((s, i) => ({ name: s.Name, path: [...topicPath, "Subscriptions", i] })),
          "subscription names are case-insensitive",
        );
        subscriptions.forEach((subscription, i) =>
          refuseDuplicates(
            ctx,
            (subscription.Rules ?? []).map((rule, r) => ({
              name: rule.Name,
              path: [...topicPath, "Subscriptions", i, "Rules", r],
            })),
            "rule names are case-insensitive",
          ),
        );
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

/** One subscription: a queue (named `<topic>/Subscriptions/<name>`, as clients address it) plus its rules. */
export interface SubscriptionSettings extends QueueSettings {
  subscriptionName: string;
  rules: CompiledRule[];
}

/** One topic: its own duplicate detection, and its subscriptions. */
export interface TopicSettings {
  name: string;
  requiresDuplicateDetection: boolean;
  duplicateDetectionWindowMs: number;
  subscriptions: SubscriptionSettings[];
}

/** The topics of every namespace in the file, with defaults applied and rules compiled. */
export function topicSettingsOf(file: EmulatorConfigFile): TopicSettings[] {
  return file.UserConfig.Namespaces.flatMap((namespace) =>
    (namespace.Topics ?? []).map((topic): TopicSettings => {
      const t = topic.Properties ?? {};
      const ms = (text: string | undefined, fallback: number) =>
        text === undefined ? fallback : parseIsoDuration(text);
      const topicTtlMs = ms(t.DefaultMessageTimeToLive, QUEUE_DEFAULTS.defaultMessageTimeToLiveMs);
      return {
        name: topic.Name,
        requiresDuplicateDetection: t.RequiresDuplicateDetection ?? QUEUE_DEFAULTS.requiresDuplicateDetection,
        duplicateDetectionWindowMs: ms(
          t.DuplicateDetectionHistoryTimeWindow,
          QUEUE_DEFAULTS.duplicateDetectionWindowMs,
        ),
        subscriptions: (topic.Subscriptions ?? []).map((subscription): SubscriptionSettings => {
          const p = subscription.Properties ?? {};
          const rules = (subscription.Rules ?? []).map((rule) => compileRule(rule));
          return {
            name: `${topic.Name}/Subscriptions/${subscription.Name}`,
            subscriptionName: subscription.Name,
            lockDurationMs: ms(p.LockDuration, QUEUE_DEFAULTS.lockDurationMs),
            maxDeliveryCount: p.MaxDeliveryCount ?? QUEUE_DEFAULTS.maxDeliveryCount,
            // Duplicates are the topic's to drop, before any subscription sees them.
            requiresDuplicateDetection: false,
            duplicateDetectionWindowMs: QUEUE_DEFAULTS.duplicateDetectionWindowMs,
            // A subscription's TTL cannot exceed its topic's: Service Bus applies the smaller.
            defaultMessageTimeToLiveMs: Math.min(
              topicTtlMs,
              ms(p.DefaultMessageTimeToLive, QUEUE_DEFAULTS.defaultMessageTimeToLiveMs),
            ),
            deadLetteringOnMessageExpiration:
              p.DeadLetteringOnMessageExpiration ?? QUEUE_DEFAULTS.deadLetteringOnMessageExpiration,
            rules: rules.length > 0 ? rules : [DEFAULT_RULE],
          };
        }),
      };
    }),
  );
}

type Path = readonly PropertyKey[];

const ENTITY_KINDS = {
  Queues: { label: "queue", properties: queuePropertiesSchema },
  Topics: { label: "topic", properties: topicPropertiesSchema },
  Subscriptions: { label: "subscription", properties: subscriptionPropertiesSchema },
  Rules: { label: "rule", properties: undefined },
} as const;

/**
 * `queue "orders" property LockDuration = "PT1X": <what was expected>`, or `topic "t" subscription "s"
 * rule "r": <problem>`, or a dotted path outside the entities.
 */
function describeIssue(raw: unknown, issue: z.core.$ZodIssue): string {
  const path: Path = issue.path;
  let message = issue.message;
  const names: string[] = [];
  let entityEnd = -1;
  let kind: (typeof ENTITY_KINDS)[keyof typeof ENTITY_KINDS] | undefined;
  for (let i = 0; i + 1 < path.length; i++) {
    const entityKind = ENTITY_KINDS[path[i] as keyof typeof ENTITY_KINDS] as typeof kind;
    if (!entityKind || typeof path[i + 1] !== "number") continue;
    const entityPath = path.slice(0, i + 2);
    const name = valueAt(raw, [...entityPath, "Name"]);
    names.push(
      typeof name === "string"
        ? `${entityKind.label} "${name}"`
        : `${entityKind.label} ${formatPath(entityPath)}`,
    );
    entityEnd = i + 2;
    kind = entityKind;
  }
  if (issue.code === "unrecognized_keys") {
    message = `unknown ${issue.keys.length > 1 ? "properties" : "property"} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    if (path.at(-1) === "Properties" && path.length === entityEnd + 1 && kind?.properties)
      message += ` (known: ${Object.keys(kind.properties.shape).join(", ")})`;
  }
  if (entityEnd >= 0) {
    const entity = names.join(" ");
    const rest = path.slice(entityEnd).filter((key) => key !== "Properties");
    if (rest.length === 0) return `${entity}: ${message}`;
    return `${entity} property ${formatPath(rest)} = ${formatValue(valueAt(raw, path))}: ${message}`;
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
