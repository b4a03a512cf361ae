/**
 * How a subscription's rules turn one message into copies, per Microsoft Learn, "Topic filters and actions"
 * (learn.microsoft.com/azure/service-bus-messaging/topic-filters): rules without an action give one copy
 * together, each matching rule with an action gives its own, and no rules means the $Default true filter.
 */
import { describe, expect, it } from "vitest";
import { compileRule, copiesFor, DEFAULT_RULE } from "../../src/emulators/servicebus/subscriptionRules";
import type { FilterableMessage } from "../../src/emulators/servicebus/sqlFilter";

const message: FilterableMessage = {
  system: { ContentType: "application/json", Label: "order", CorrelationId: "c-1" },
  user: new Map<string, string | number | boolean | null>([
    ["color", "blue"],
    ["quantity", 5],
  ]),
};

const sql = (Name: string, SqlExpression: string, action?: string) =>
  compileRule({
    Name,
    Properties: {
      FilterType: "Sql",
      SqlFilter: { SqlExpression },
      ...(action ? { Action: { SqlExpression: action } } : {}),
    },
  });

describe("subscription rules", () => {
  it("gives one copy for all matching rules without an action, and one per matching rule with an action", () => {
    // Learn's example: five matching rules, two of them with actions, give three messages.
    const rules = [
      sql("a", "1=1"),
      sql("b", "color = 'blue'"),
      sql("c", "quantity > 1"),
      sql("d", "1=1", "SET x = 1"),
      sql("e", "1=1", "SET x = 2"),
      sql("f", "1=0", "SET x = 3"),
    ];
    const copies = copiesFor(rules, message);
    expect(copies.map((copy) => copy.ruleName)).toEqual([undefined, "d", "e"]);
    expect(Object.fromEntries(copies[2]!.changes!.user)).toEqual({ x: 2 });
  });

  it("gives nothing when no rule matches, and everything under the $Default rule", () => {
    expect(copiesFor([sql("none", "1=0")], message)).toEqual([]);
    expect(copiesFor([DEFAULT_RULE], message)).toEqual([{}]);
  });

  it("matches a correlation filter only when every named field and property is equal", () => {
    const correlation = (CorrelationFilter: object) =>
      compileRule({ Name: "c", Properties: { FilterType: "Correlation", CorrelationFilter } }).matches(
        message,
      );
    expect(correlation({ ContentType: "application/json", Label: "order" })).toBe(true);
    expect(correlation({ CorrelationId: "c-1", Properties: { color: "blue", quantity: 5 } })).toBe(true);
    expect(correlation({ ContentType: "application/json", Label: "ORDER" })).toBe(false);
    expect(correlation({ Properties: { quantity: "5" } })).toBe(false); // the type counts too
    expect(correlation({ Properties: { missing: "x" } })).toBe(false);
    expect(() => correlation({})).toThrow(/names no field and no property/);
  });
});
