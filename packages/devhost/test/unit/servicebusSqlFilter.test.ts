/**
 * The SQL subset of subscription rules. Expected results follow Microsoft Learn, "Subscription Rule SQL
 * Filter Syntax" (learn.microsoft.com/azure/service-bus-messaging/service-bus-messaging-sql-filter): a
 * missing user property is unknown, not an error; a missing system property name is an error; unknown
 * makes comparisons unknown, and only a true filter selects the message.
 */
import { describe, expect, it } from "vitest";
import {
  parseSqlFilter,
  parseSqlRuleAction,
  SqlSyntaxError,
  type FilterableMessage,
  type SqlValue,
} from "../../src/emulators/servicebus/sqlFilter";

function message(
  user: Record<string, SqlValue> = {},
  system: FilterableMessage["system"] = {},
): FilterableMessage {
  return { system, user: new Map(Object.entries(user)) };
}

const order = message(
  { color: "blue", quantity: 12, price: 2.5, priority: true, note: null, "odd name": "x" },
  { MessageId: "m-1", CorrelationId: "c-1", Label: "order", To: "shop", ContentType: "application/json" },
);

const matches = (expression: string, m: FilterableMessage = order) => parseSqlFilter(expression).matches(m);

describe("SQL filters", () => {
  it("compares user properties, bare or as user.x, with = <> != < > <= >=", () => {
    expect(matches("color = 'blue'")).toBe(true);
    expect(matches("user.color = 'blue'")).toBe(true);
    expect(matches("color <> 'red' AND color != 'green'")).toBe(true);
    expect(matches("quantity > 10 AND quantity >= 12 AND quantity < 13 AND quantity <= 12")).toBe(true);
    expect(matches("price = 2.5")).toBe(true);
    expect(matches("priority = TRUE")).toBe(true);
    expect(matches("color = 'Blue'")).toBe(false); // ordinal: the emulator's choice (docs/servicebus-emulator.md, known limits)
  });

  it("reads system properties as sys.<name>, case-insensitively, with Subject as Label", () => {
    expect(matches("sys.MessageId = 'm-1' AND sys.correlationid = 'c-1'")).toBe(true);
    expect(matches("sys.Label = 'order' AND sys.Subject = 'order'")).toBe(true);
    expect(matches("sys.To = 'shop' AND sys.ContentType LIKE 'application/%'")).toBe(true);
    expect(matches("sys.ReplyTo IS NULL AND NOT EXISTS(sys.SessionId)")).toBe(true);
  });

  it("treats 1=1 and 1=0 as the true and false filters", () => {
    expect(matches("1=1", message())).toBe(true);
    expect(matches("1=0", message())).toBe(false);
  });

  it("combines with AND, OR, NOT and parentheses, AND binding tighter than OR", () => {
    expect(matches("color = 'red' OR color = 'blue' AND quantity = 12")).toBe(true);
    expect(matches("(color = 'red' OR color = 'blue') AND quantity = 1")).toBe(false);
    expect(matches("NOT color = 'red'")).toBe(true);
    expect(matches("NOT (color = 'blue' OR quantity = 1)")).toBe(false);
  });

  it("evaluates a missing user property as unknown: comparisons are not true, and NOT of unknown is unknown", () => {
    expect(matches("missing = 1")).toBe(false);
    expect(matches("missing <> 1")).toBe(false);
    expect(matches("NOT (missing = 1)")).toBe(false);
    expect(matches("missing = 1 OR color = 'blue'")).toBe(true); // unknown OR true = true
    expect(matches("missing = 1 AND color = 'blue'")).toBe(false); // unknown AND true = unknown
  });

  it("has IS [NOT] NULL (missing or null) and EXISTS (present, even when null)", () => {
    expect(matches("missing IS NULL AND note IS NULL AND color IS NOT NULL")).toBe(true);
    expect(matches("EXISTS(note) AND EXISTS(color) AND NOT EXISTS(missing)")).toBe(true);
  });

  it("has [NOT] IN over a list of expressions", () => {
    expect(matches("color IN ('red', 'blue')")).toBe(true);
    expect(matches("color NOT IN ('red', 'green')")).toBe(true);
    expect(matches("quantity IN (1, 2, 10 + 2)")).toBe(true);
    expect(matches("missing IN (1, 2)")).toBe(false);
    expect(matches("missing NOT IN (1, 2)")).toBe(false);
  });

  it("has [NOT] LIKE with % and _ and an ESCAPE character", () => {
    expect(matches("color LIKE 'bl%'")).toBe(true);
    expect(matches("color LIKE 'b_ue'")).toBe(true);
    expect(matches("color LIKE 'b_'")).toBe(false);
    expect(matches("color NOT LIKE 'r%'")).toBe(true);
    const percent = message({ code: "ABC%", other: "ABCD" });
    // Learn's own example: 'ABC\%' ESCAPE '\' matches ABC% rather than strings starting with ABC.
    expect(matches("code LIKE 'ABC\\%' ESCAPE '\\'", percent)).toBe(true);
    expect(matches("other LIKE 'ABC\\%' ESCAPE '\\'", percent)).toBe(false);
    expect(matches("code LIKE 'a.c%'", message({ code: "abc" }))).toBe(false); // '.' is not a wildcard
  });

  it("does arithmetic with + - * / % and unary minus, integers dividing as integers", () => {
    expect(matches("quantity * 2 - 4 = 20")).toBe(true);
    expect(matches("quantity / 5 = 2 AND quantity % 5 = 2")).toBe(true);
    expect(matches("price * 2 = 5.0")).toBe(true);
    expect(matches("-quantity < 0 AND -(quantity - 20) = 8")).toBe(true);
    expect(matches("quantity / 0 = 1")).toBe(false);
    expect(matches("1.5E1 = 15")).toBe(true);
  });

  it('reads string constants with doubled quotes, and [delimited] and "quoted" property names', () => {
    expect(matches("[odd name] = 'x' AND \"odd name\" = 'x'")).toBe(true);
    expect(matches("name = 'it''s'", message({ name: "it's" }))).toBe(true);
  });

  it("takes keywords in any case", () => {
    expect(matches("color in ('blue') and not missing is not null Or false")).toBe(true);
  });

  it("refuses bad expressions with the problem and its position", () => {
    const problem = (expression: string) => {
      try {
        parseSqlFilter(expression);
      } catch (error) {
        expect(error).toBeInstanceOf(SqlSyntaxError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${expression}`);
    };
    expect(problem("color = ")).toMatch(/expected .* but found the end of the expression/);
    expect(problem("color = 'blue")).toMatch(/unterminated/);
    expect(problem("sys.Colour = 'x'")).toMatch(/unknown system property sys.Colour/);
    expect(problem("color")).toMatch(/must be a condition/);
    expect(problem("color = 'a' 'b'")).toMatch(/position 13/);
    expect(problem("newid() = 'x'")).toMatch(/function newid\(\) is not supported/);
    expect(problem("")).toMatch(/empty/);
    expect(problem("a.b = 1")).toMatch(/unknown scope 'a'/);
  });
});

describe("SQL rule actions", () => {
  it("SETs user and system properties from expressions and REMOVEs user properties, in order", () => {
    const action = parseSqlRuleAction(
      "SET quantity = quantity * 2; SET sys.To = 'Entity'; REMOVE color; SET total = quantity + 1",
    );
    const changes = action.changesFor(order);
    expect(Object.fromEntries(changes.user)).toEqual({ quantity: 24, total: 25 });
    expect(changes.system).toEqual({ To: "Entity" });
    expect([...changes.removed]).toEqual(["color"]);
  });

  it("takes statements without semicolons, as the action grammar makes them optional", () => {
    // Learn, "Subscription Rule SQL Action Syntax": <statement> ::= <action> [;] (semicolon is optional).
    const changes = parseSqlRuleAction("SET a = 1 SET b = a + 1; REMOVE color").changesFor(order);
    expect(Object.fromEntries(changes.user)).toEqual({ a: 1, b: 2 });
    expect([...changes.removed]).toEqual(["color"]);
  });

  it("refuses what is not SET or REMOVE", () => {
    expect(() => parseSqlRuleAction("UPDATE x = 1")).toThrow(/expected SET or REMOVE/);
    expect(() => parseSqlRuleAction("SET x 1")).toThrow(/expected '='/);
    expect(() => parseSqlRuleAction("REMOVE sys.To")).toThrow(/REMOVE applies to user properties/);
  });
});
