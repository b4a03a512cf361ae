/**
 * The SQL-92 subset that Service Bus subscription rules use, as a pure parser and evaluator: filters
 * (`color = 'blue' AND quantity > 10`) and rule actions (`SET sys.To = 'x'; REMOVE secret`). The grammar
 * is the one on Microsoft Learn, "Subscription Rule SQL Filter Syntax" and "Subscription Rule SQL Action
 * Syntax" (learn.microsoft.com/azure/service-bus-messaging/service-bus-messaging-sql-filter and
 * service-bus-messaging-sql-rule-action). It knows nothing of AMQP: a message is seen through
 * `FilterableMessage`.
 */

/** A value in an expression; null is SQL's unknown (a missing user property, or NULL). */
export type SqlValue = string | number | boolean | null;

/**
 * The system properties a rule may name as `sys.<name>` (case-insensitive), by their canonical name.
 * `Label` and `Subject` are one property: the older and newer SDKs' names for AMQP's subject.
 */
export const SYSTEM_PROPERTIES = [
  "MessageId",
  "CorrelationId",
  "To",
  "ReplyTo",
  "Label",
  "ContentType",
  "SessionId",
  "ReplyToSessionId",
] as const;
export type SystemPropertyName = (typeof SYSTEM_PROPERTIES)[number];

const SYSTEM_BY_LOWER_NAME = new Map<string, SystemPropertyName>([
  ...SYSTEM_PROPERTIES.map((name) => [name.toLowerCase(), name] as const),
  ["subject", "Label"],
]);

/** What a filter reads from a message. */
export interface FilterableMessage {
  system: Partial<Record<SystemPropertyName, SqlValue>>;
  /** Application (user) properties, already reduced to SQL values; names are matched exactly. */
  user: ReadonlyMap<string, SqlValue>;
}

/** What a rule action does to the copy of the message a subscription receives. */
export interface MessageChanges {
  system: Partial<Record<SystemPropertyName, SqlValue>>;
  /** User properties to set (null: set to null). */
  user: Map<string, SqlValue>;
  /** User properties to remove. */
  removed: Set<string>;
}

export class SqlSyntaxError extends Error {
  override name = "SqlSyntaxError";
}

// ------------------------------------------------------------------------------------ tokens

type Token =
  | { kind: "number"; value: number; at: number }
  | { kind: "string"; value: string; at: number }
  | { kind: "word"; value: string; at: number }
  /** A [delimited] or "quoted" identifier: never a keyword. */
  | { kind: "name"; value: string; at: number }
  | { kind: "symbol"; value: string; at: number }
  | { kind: "end"; value: ""; at: number };

const SYMBOLS = ["<>", "!=", ">=", "<=", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", ".", ";"];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const at = i;
    const numberMatch = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (numberMatch) {
      tokens.push({ kind: "number", value: Number(numberMatch[0]), at });
      i += numberMatch[0].length;
    } else if (c === "'" || c === '"' || c === "[") {
      const close = c === "[" ? "]" : c;
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new SqlSyntaxError(`unterminated ${c}...${close} at position ${at + 1}`);
        if (text[i] === close) {
          if (text[i + 1] === close) {
            value += close; // a doubled closing character stands for itself
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i];
        i++;
      }
      tokens.push(c === "'" ? { kind: "string", value, at } : { kind: "name", value, at });
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0] as string;
      tokens.push({ kind: "word", value: word, at });
      i += word.length;
    } else {
      const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
      if (!symbol) throw new SqlSyntaxError(`unexpected character '${c}' at position ${at + 1}`);
      tokens.push({ kind: "symbol", value: symbol, at });
      i += symbol.length;
    }
  }
  tokens.push({ kind: "end", value: "", at: text.length });
  return tokens;
}

// ------------------------------------------------------------------------------------ syntax tree

type PropertyRef = { scope: "sys"; name: SystemPropertyName } | { scope: "user"; name: string };

type Node =
  | { kind: "constant"; value: SqlValue }
  | { kind: "property"; ref: PropertyRef }
  | { kind: "unary"; op: "+" | "-"; operand: Node }
  | { kind: "arithmetic"; op: "+" | "-" | "*" | "/" | "%"; left: Node; right: Node }
  | { kind: "compare"; op: "=" | "<>" | "<" | ">" | "<=" | ">="; left: Node; right: Node }
  | { kind: "and" | "or"; left: Node; right: Node }
  | { kind: "not"; operand: Node }
  | { kind: "isNull"; ref: PropertyRef; negated: boolean }
  | { kind: "in"; operand: Node; items: Node[]; negated: boolean }
  | { kind: "like"; operand: Node; pattern: Node; escape: Node | undefined; negated: boolean }
  | { kind: "exists"; ref: PropertyRef };

/** Node kinds whose value is a truth value: what a filter must be. */
const PREDICATES = new Set<Node["kind"]>(["compare", "and", "or", "not", "isNull", "in", "like", "exists"]);

const KEYWORDS = new Set([
  "and",
  "or",
  "not",
  "is",
  "null",
  "in",
  "like",
  "escape",
  "exists",
  "true",
  "false",
]);

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.position++;
    return token;
  }

  isKeyword(word: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === "word" && token.value.toLowerCase() === word;
  }

  private isSymbol(symbol: string): boolean {
    const token = this.peek();
    return token.kind === "symbol" && token.value === symbol;
  }

  acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false;
    this.position++;
    return true;
  }

  acceptSymbol(symbol: string): boolean {
    if (!this.isSymbol(symbol)) return false;
    this.position++;
    return true;
  }

  expectSymbol(symbol: string): void {
    if (!this.acceptSymbol(symbol)) throw this.unexpected(`'${symbol}'`);
  }

  unexpected(expected: string): SqlSyntaxError {
    const token = this.peek();
    const found = token.kind === "end" ? "the end of the expression" : `'${token.value}'`;
    return new SqlSyntaxError(`expected ${expected} but found ${found} at position ${token.at + 1}`);
  }

  atEnd(): boolean {
    return this.peek().kind === "end";
  }

  or(): Node {
    let left = this.and();
    while (this.acceptKeyword("or")) left = { kind: "or", left, right: this.and() };
    return left;
  }

  private and(): Node {
    let left = this.not();
    while (this.acceptKeyword("and")) left = { kind: "and", left, right: this.not() };
    return left;
  }

  private not(): Node {
    if (this.acceptKeyword("not")) return { kind: "not", operand: this.not() };
    return this.comparison();
  }

  private comparison(): Node {
    const left = this.additive();
    const token = this.peek();
    if (token.kind === "symbol" && ["=", "<>", "!=", "<", ">", "<=", ">="].includes(token.value)) {
      this.next();
      const op = (token.value === "!=" ? "<>" : token.value) as "=";
      return { kind: "compare", op, left, right: this.additive() };
    }
    if (this.acceptKeyword("is")) {
      const negated = this.acceptKeyword("not");
      if (!this.acceptKeyword("null")) throw this.unexpected("NULL after IS");
      if (left.kind !== "property") throw new SqlSyntaxError("IS [NOT] NULL applies to a property only");
      return { kind: "isNull", ref: left.ref, negated };
    }
    const negated = this.isKeyword("not") && (this.isKeyword("in", 1) || this.isKeyword("like", 1));
    if (negated) this.next();
    if (this.acceptKeyword("in")) {
      this.expectSymbol("(");
      const items = [this.additive()];
      while (this.acceptSymbol(",")) items.push(this.additive());
      this.expectSymbol(")");
      return { kind: "in", operand: left, items, negated };
    }
    if (this.acceptKeyword("like")) {
      const pattern = this.additive();
      const escape = this.acceptKeyword("escape") ? this.additive() : undefined;
      return { kind: "like", operand: left, pattern, escape, negated };
    }
    if (negated) throw this.unexpected("IN or LIKE after NOT");
    return left;
  }

  additive(): Node {
    let left = this.multiplicative();
    for (;;) {
      const token = this.peek();
      if (token.kind !== "symbol" || (token.value !== "+" && token.value !== "-")) return left;
      this.next();
      left = { kind: "arithmetic", op: token.value, left, right: this.multiplicative() };
    }
  }

  private multiplicative(): Node {
    let left = this.unary();
    for (;;) {
      const token = this.peek();
      if (token.kind !== "symbol" || !["*", "/", "%"].includes(token.value)) return left;
      this.next();
      left = { kind: "arithmetic", op: token.value as "*", left, right: this.unary() };
    }
  }

  private unary(): Node {
    const token = this.peek();
    if (token.kind === "symbol" && (token.value === "+" || token.value === "-")) {
      this.next();
      return { kind: "unary", op: token.value, operand: this.unary() };
    }
    return this.primary();
  }

  private primary(): Node {
    const token = this.peek();
    if (token.kind === "number") {
      this.next();
      return { kind: "constant", value: token.value };
    }
    if (token.kind === "string") {
      this.next();
      return { kind: "constant", value: token.value };
    }
    if (this.acceptSymbol("(")) {
      const inner = this.or();
      this.expectSymbol(")");
      return inner;
    }
    if (this.acceptKeyword("true")) return { kind: "constant", value: true };
    if (this.acceptKeyword("false")) return { kind: "constant", value: false };
    if (this.acceptKeyword("null")) return { kind: "constant", value: null };
    if (this.acceptKeyword("exists")) {
      this.expectSymbol("(");
      const ref = this.property();
      this.expectSymbol(")");
      return { kind: "exists", ref };
    }
    if (token.kind === "word" && this.peek(1).kind === "symbol" && this.peek(1).value === "(") {
      // newid() and property(): the grammar's <function>. Not served by the emulator (see the docs).
      throw new SqlSyntaxError(`the function ${token.value}() is not supported by this emulator`);
    }
    return { kind: "property", ref: this.property() };
  }

  /** `[sys. | user.]name`, where a name is a regular, [delimited] or "quoted" identifier. */
  property(): PropertyRef {
    const first = this.identifier();
    if (this.acceptSymbol(".")) {
      const name = this.identifier();
      const scope = first.toLowerCase();
      if (scope === "user") return { scope: "user", name };
      if (scope === "sys") {
        const canonical = SYSTEM_BY_LOWER_NAME.get(name.toLowerCase());
        if (!canonical) {
          // Learn: "An attempt to access a nonexistent system property is an error".
          throw new SqlSyntaxError(
            `unknown system property sys.${name} (supported: ${[...SYSTEM_PROPERTIES, "Subject"].map((p) => `sys.${p}`).join(", ")})`,
          );
        }
        return { scope: "sys", name: canonical };
      }
      throw new SqlSyntaxError(`unknown scope '${first}' (expected sys or user)`);
    }
    return { scope: "user", name: first };
  }

  private identifier(): string {
    const token = this.peek();
    if (token.kind === "name") {
      this.next();
      return token.value;
    }
    if (token.kind === "word" && !KEYWORDS.has(token.value.toLowerCase())) {
      this.next();
      return token.value;
    }
    throw this.unexpected("a property name");
  }
}

// ------------------------------------------------------------------------------------ evaluation

function read(ref: PropertyRef, message: FilterableMessage): SqlValue {
  const value = ref.scope === "sys" ? message.system[ref.name] : message.user.get(ref.name);
  return value ?? null;
}

function has(ref: PropertyRef, message: FilterableMessage): boolean {
  return ref.scope === "sys" ? message.system[ref.name] != null : message.user.has(ref.name);
}

function arithmetic(op: string, left: SqlValue, right: SqlValue): SqlValue {
  if (typeof left !== "number" || typeof right !== "number") return null;
  // Integers divide as integers, as Service Bus's long operands do; a zero divisor gives unknown.
  const integers = Number.isInteger(left) && Number.isInteger(right);
  switch (op) {
    case "+":
      return left + right;
    case "-":
      return left - right;
    case "*":
      return left * right;
    case "/":
      if (right === 0) return null;
      return integers ? Math.trunc(left / right) : left / right;
    default:
      return right === 0 ? null : left % right;
  }
}

/** Comparison with SQL's unknown: either side unknown, or operands of different types, is unknown. */
function compare(op: string, left: SqlValue, right: SqlValue): boolean | null {
  if (left === null || right === null || typeof left !== typeof right) return null;
  if (typeof left === "boolean" && op !== "=" && op !== "<>") return null;
  switch (op) {
    case "=":
      return left === right;
    case "<>":
      return left !== right;
    case "<":
      return left < (right as typeof left);
    case ">":
      return left > (right as typeof left);
    case "<=":
      return left <= (right as typeof left);
    default:
      return left >= (right as typeof left);
  }
}

function likeToRegExp(pattern: string, escape: string | undefined): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (escape !== undefined && c === escape && i + 1 < pattern.length) {
      source += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    } else if (c === "%") source += "[\\s\\S]*";
    else if (c === "_") source += "[\\s\\S]";
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

function evaluate(node: Node, message: FilterableMessage): SqlValue {
  switch (node.kind) {
    case "constant":
      return node.value;
    case "property":
      return read(node.ref, message);
    case "unary": {
      const value = evaluate(node.operand, message);
      if (typeof value !== "number") return null;
      return node.op === "-" ? -value : value;
    }
    case "arithmetic":
      return arithmetic(node.op, evaluate(node.left, message), evaluate(node.right, message));
    case "compare":
      return compare(node.op, evaluate(node.left, message), evaluate(node.right, message));
    case "and": {
      const left = truth(evaluate(node.left, message));
      if (left === false) return false;
      const right = truth(evaluate(node.right, message));
      if (right === false) return false;
      return left === true && right === true ? true : null;
    }
    case "or": {
      const left = truth(evaluate(node.left, message));
      if (left === true) return true;
      const right = truth(evaluate(node.right, message));
      if (right === true) return true;
      return left === false && right === false ? false : null;
    }
    case "not": {
      const value = truth(evaluate(node.operand, message));
      return value === null ? null : !value;
    }
    case "isNull":
      return (read(node.ref, message) === null) !== node.negated;
    case "exists":
      return has(node.ref, message);
    case "in": {
      const value = evaluate(node.operand, message);
      if (value === null) return null;
      let unknown = false;
      for (const item of node.items) {
        const result = compare("=", value, evaluate(item, message));
        if (result === true) return !node.negated;
        if (result === null) unknown = true;
      }
      return unknown ? null : node.negated;
    }
    case "like": {
      const value = evaluate(node.operand, message);
      const pattern = evaluate(node.pattern, message);
      const escape = node.escape ? evaluate(node.escape, message) : undefined;
      if (typeof value !== "string" || typeof pattern !== "string") return null;
      if (escape !== undefined && (typeof escape !== "string" || escape.length !== 1)) return null;
      return likeToRegExp(pattern, escape ?? undefined).test(value) !== node.negated;
    }
  }
}

function truth(value: SqlValue): boolean | null {
  return typeof value === "boolean" ? value : null;
}

// ------------------------------------------------------------------------------------ public API

export interface SqlFilter {
  readonly expression: string;
  /** True only when the predicate is true; false and unknown both leave the message out. */
  matches(message: FilterableMessage): boolean;
}

/** Parses a filter expression; throws SqlSyntaxError saying what is wrong and where. */
export function parseSqlFilter(expression: string): SqlFilter {
  const parser = new Parser(tokenize(expression));
  if (parser.atEnd()) throw new SqlSyntaxError("the filter expression is empty");
  const tree = parser.or();
  if (!parser.atEnd()) throw parser.unexpected("an operator or the end of the expression");
  if (!PREDICATES.has(tree.kind) && !(tree.kind === "constant" && typeof tree.value === "boolean")) {
    throw new SqlSyntaxError("a filter must be a condition (a comparison, IN, LIKE, IS NULL, EXISTS...)");
  }
  return { expression, matches: (message) => evaluate(tree, message) === true };
}

type Statement = { kind: "set"; ref: PropertyRef; value: Node } | { kind: "remove"; ref: PropertyRef };

export interface SqlRuleAction {
  readonly expression: string;
  /** The changes the action makes to this message; statements run in order, each seeing the ones before. */
  changesFor(message: FilterableMessage): MessageChanges;
}

/** Parses a rule action: `SET <property> = <expression>` and `REMOVE <property>` statements, each optionally ending in ';'. */
export function parseSqlRuleAction(expression: string): SqlRuleAction {
  const parser = new Parser(tokenize(expression));
  const statements: Statement[] = [];
  while (!parser.atEnd()) {
    if (parser.acceptKeyword("set")) {
      const ref = parser.property();
      parser.expectSymbol("=");
      statements.push({ kind: "set", ref, value: parser.additive() });
    } else if (parser.acceptKeyword("remove")) {
      const ref = parser.property();
      if (ref.scope === "sys")
        throw new SqlSyntaxError(`REMOVE applies to user properties, not sys.${ref.name}`);
      statements.push({ kind: "remove", ref });
    } else throw parser.unexpected("SET or REMOVE");
    parser.acceptSymbol(";"); // optional between statements (Learn: "Semicolon is optional")
  }
  if (statements.length === 0) throw new SqlSyntaxError("the action is empty");
  return {
    expression,
    changesFor(message) {
      const changes: MessageChanges = { system: {}, user: new Map(), removed: new Set() };
      const user = new Map(message.user);
      const current: FilterableMessage = { system: { ...message.system }, user };
      for (const statement of statements) {
        const { ref } = statement;
        if (statement.kind === "remove") {
          user.delete(ref.name);
          changes.user.delete(ref.name);
          changes.removed.add(ref.name);
          continue;
        }
        const value = evaluate(statement.value, current);
        if (ref.scope === "sys") {
          current.system[ref.name] = value;
          changes.system[ref.name] = value;
        } else {
          user.set(ref.name, value);
          changes.user.set(ref.name, value);
          changes.removed.delete(ref.name);
        }
      }
      return changes;
    },
  };
}
