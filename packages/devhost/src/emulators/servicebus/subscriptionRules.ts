/**
 * A subscription's rules, compiled from Config.json: which messages a subscription takes from its topic,
 * and what each rule's action changes on the copy it receives. Semantics from Microsoft Learn, "Topic
 * filters and actions" (learn.microsoft.com/azure/service-bus-messaging/topic-filters): rules without an
 * action are OR-ed into one copy; every matching rule with an action makes a copy of its own, carrying a
 * RuleName property; a subscription without rules has the $Default rule, a true filter.
 */
import {
  parseSqlFilter,
  parseSqlRuleAction,
  SYSTEM_PROPERTIES,
  type FilterableMessage,
  type MessageChanges,
  type SqlRuleAction,
  type SqlValue,
  type SystemPropertyName,
} from "./sqlFilter";

/** The correlation filter's named fields, as Config.json spells them. */
export const CORRELATION_FIELDS = [
  "ContentType",
  "CorrelationId",
  "Label",
  "MessageId",
  "ReplyTo",
  "ReplyToSessionId",
  "SessionId",
  "To",
] as const satisfies readonly SystemPropertyName[];
export type CorrelationField = (typeof CORRELATION_FIELDS)[number];

/** A rule as Config.json declares it (validated by config.ts). */
export interface RuleDeclaration {
  Name: string;
  Properties: {
    FilterType: "Sql" | "Correlation";
    SqlFilter?: { SqlExpression: string } | undefined;
    CorrelationFilter?:
      | (Partial<Record<CorrelationField, string>> & {
          Properties?: Record<string, string | number | boolean> | undefined;
        })
      | undefined;
    Action?: { SqlExpression: string } | undefined;
  };
}

export interface CompiledRule {
  name: string;
  matches(message: FilterableMessage): boolean;
  action?: SqlRuleAction;
}

/** The rule a subscription has when it declares none: every message (Service Bus's $Default TrueFilter). */
export const DEFAULT_RULE: CompiledRule = { name: "$Default", matches: () => true };

/** Compiles one rule; throws SqlSyntaxError, or Error for a missing filter, with the problem. */
export function compileRule(rule: RuleDeclaration): CompiledRule {
  const { FilterType, SqlFilter, CorrelationFilter, Action } = rule.Properties;
  let matches: CompiledRule["matches"];
  if (FilterType === "Sql") {
    if (!SqlFilter) throw new Error('FilterType "Sql" needs a SqlFilter { SqlExpression }');
    matches = parseSqlFilter(SqlFilter.SqlExpression).matches;
  } else {
    if (!CorrelationFilter) throw new Error('FilterType "Correlation" needs a CorrelationFilter');
    const named = CORRELATION_FIELDS.some((field) => CorrelationFilter[field] !== undefined);
    if (!named && Object.keys(CorrelationFilter.Properties ?? {}).length === 0) {
      // Service Bus refuses an empty correlation filter; a subscription without rules already takes everything.
      throw new Error("the CorrelationFilter names no field and no property");
    }
    matches = correlationMatcher(CorrelationFilter);
  }
  const action = Action ? parseSqlRuleAction(Action.SqlExpression) : undefined;
  return { name: rule.Name, matches, ...(action ? { action } : {}) };
}

/** Every named field and every listed application property must equal the message's exactly. */
function correlationMatcher(filter: NonNullable<RuleDeclaration["Properties"]["CorrelationFilter"]>) {
  const fields = CORRELATION_FIELDS.filter((field) => filter[field] !== undefined).map(
    (field) => [field, filter[field] as string] as const,
  );
  const properties = Object.entries(filter.Properties ?? {});
  return (message: FilterableMessage): boolean =>
    fields.every(([field, expected]) => message.system[field] === expected) &&
    properties.every(([name, expected]) => message.user.get(name) === expected);
}

/** One copy of a message for a subscription: the changes of the rule action that made it, if any. */
export interface SubscriptionCopy {
  ruleName?: string;
  changes?: MessageChanges;
}

/**
 * The copies a subscription receives of a message: none, one for all matching rules without an action,
 * and one per matching rule with an action.
 */
export function copiesFor(rules: readonly CompiledRule[], message: FilterableMessage): SubscriptionCopy[] {
  const copies: SubscriptionCopy[] = [];
  let plainMatch = false;
  for (const rule of rules) {
    if (!rule.matches(message)) continue;
    if (rule.action) copies.push({ ruleName: rule.name, changes: rule.action.changesFor(message) });
    else plainMatch = true;
  }
  if (plainMatch) copies.unshift({});
  return copies;
}

/** A decoded application property as a SQL value; types SQL cannot compare (dates, bytes, lists) are unknown. */
export function sqlValueOf(value: unknown): SqlValue {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "bigint") return Number(value);
  return null;
}

/** The message's system properties that rules can read, from decoded AMQP properties. */
export function systemPropertiesOf(
  amqp: Partial<Record<SystemPropertyName, unknown>>,
): FilterableMessage["system"] {
  const system: FilterableMessage["system"] = {};
  for (const name of SYSTEM_PROPERTIES) {
    const value = amqp[name];
    if (value === undefined || value === null) continue;
    // Ids may be uuids or binary on the wire; a filter compares them as text.
    system[name] = Buffer.isBuffer(value) ? value.toString("hex") : (sqlValueOf(value) ?? String(value));
  }
  return system;
}
