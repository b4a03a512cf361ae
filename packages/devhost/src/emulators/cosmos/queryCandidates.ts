/**
 * Which documents of a container a query can possibly return, decided before the query engine runs: the engine
 * evaluates its WHERE on every document (about a microsecond each), so a query that matches 100 of 50,000
 * documents would still cost 50,000 evaluations. Some conditions can be checked for much less, straight on the
 * document: `c.processState = 'Pending'`, `c.processState IN (@s0, @s1)`, `ARRAY_CONTAINS(@states,
 * c.processState)`, `c.completeBy <= @now`, `IS_DEFINED(c.alert)`, `NOT IS_NULL(c.alert)`. When the WHERE is such
 * conditions ANDed with others, a document that fails one of them cannot match, and only the others are handed
 * to the engine, which still evaluates the whole WHERE on each. So the answer is the engine's, over fewer
 * documents.
 *
 * That holds only when skipping a document changes nothing else, so the narrowing applies only when:
 *  - the query reads the container itself (`FROM c`, `FROM root r`): no JOIN, no `FROM x IN c.items`, whose
 *    iteration the engine runs before the WHERE;
 *  - every part of the WHERE is an expression whose evaluation cannot throw (constants, parameters, paths under
 *    the root alias, operators, and the built-in functions listed below with their arity). Otherwise a document
 *    left out might have been the one that makes the engine answer 400, as it does for a UDF that throws or a
 *    built-in called with the wrong number of arguments;
 *  - a condition's test is exactly the engine's: the path is read as its generated code reads it, and a value is
 *    compared only when it is a string, a number, a boolean or null, whose comparisons are plain `===`, `<`, `<=`.
 * Anything else is not narrowed: the engine then reads every document, as the server alone does.
 */

/** The parts of the engine's SQL syntax tree read here (the parser's node shapes). */
interface SqlNode {
  type: string;
  [field: string]: unknown;
}

/** A query's parameters as the engine's generated code reads them (`$p`): by name without the `@`. */
export type ParameterValues = Record<string, unknown>;

/** A test on one document: false only for documents the query cannot return. */
export type DocumentTest = (document: unknown) => boolean;

/** Built from a query's parameters; undefined when no condition of the query narrows with these values. */
export type CandidateFilter = (parameters: ParameterValues) => DocumentTest | undefined;

/** The built-in functions whose evaluation never throws when called with one of these numbers of arguments. */
const SAFE_FUNCTIONS: Readonly<Record<string, readonly number[]>> = {
  IS_ARRAY: [1],
  IS_BOOL: [1],
  IS_DEFINED: [1],
  IS_NULL: [1],
  IS_NUMBER: [1],
  IS_OBJECT: [1],
  IS_PRIMITIVE: [1],
  IS_STRING: [1],
  ARRAY_CONTAINS: [2, 3],
  ARRAY_LENGTH: [1],
  CONTAINS: [2],
  STARTSWITH: [2],
  ENDSWITH: [2],
  LENGTH: [1],
  LOWER: [1],
  UPPER: [1],
  TRIM: [1],
  LTRIM: [1],
  RTRIM: [1],
};

/** The type tests among them: each returns a boolean for any value, so NOT of one is its negation. */
const TYPE_TESTS: Readonly<Record<string, (value: unknown) => boolean>> = {
  IS_DEFINED: (v) => typeof v !== "undefined",
  IS_NULL: (v) => v === null,
  IS_STRING: (v) => typeof v === "string",
  IS_NUMBER: (v) => typeof v === "number",
  IS_BOOL: (v) => typeof v === "boolean",
};

type Key = string | number;
type Primitive = string | number | boolean | null;

const isNode = (value: unknown): value is SqlNode =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

const nodes = (value: unknown): SqlNode[] => (Array.isArray(value) ? value.filter(isNode) : []);

const functionName = (node: SqlNode): string | undefined => {
  const name = node.name;
  return isNode(name) && typeof name.name === "string" ? name.name.toUpperCase() : undefined;
};

/** The root alias of a query that reads the container itself, else undefined. */
function rootAlias(body: SqlNode): string | undefined {
  const from = body.from;
  if (!isNode(from) || nodes(from.joins).length > 0) return undefined;
  const source = from.source;
  if (!isNode(source) || source.iteration) return undefined;
  const expression = source.expression;
  if (!isNode(expression) || expression.type !== "collection_expression") return undefined;
  const collection = expression.expression;
  if (!isNode(collection) || collection.type !== "identifier" || typeof collection.name !== "string")
    return undefined;
  const alias = source.alias;
  if (alias === undefined || alias === null) return collection.name;
  return isNode(alias) && alias.type === "identifier" && typeof alias.name === "string"
    ? alias.name
    : undefined;
}

/** Whether evaluating `node` in the engine can never throw, whatever the document and parameters. */
function cannotThrow(node: unknown, alias: string): boolean {
  if (!isNode(node)) return false;
  const all = (children: unknown): boolean =>
    Array.isArray(children) && children.every((child) => cannotThrow(child, alias));
  switch (node.type) {
    case "boolean_constant":
    case "number_constant":
    case "string_constant":
    case "null_constant":
    case "parameter_name":
      return true;
    case "identifier":
      return node.name === alias;
    case "array_constant":
    case "scalar_array_expression":
      return all(node.elements);
    case "object_constant":
    case "scalar_object_expression":
      return (
        Array.isArray(node.properties) &&
        node.properties.every((p: { value?: unknown }) => cannotThrow(p.value, alias))
      );
    case "scalar_member_expression": {
      if (!cannotThrow(node.object, alias)) return false;
      if (!node.computed) return true;
      // A computed property must be a constant: a parameter's object value would be converted to a key.
      const property = node.property;
      return isNode(property) && (property.type === "string_constant" || property.type === "number_constant");
    }
    case "scalar_binary_expression":
      return cannotThrow(node.left, alias) && cannotThrow(node.right, alias);
    case "scalar_unary_expression":
      return cannotThrow(node.argument, alias);
    case "scalar_in_expression":
      return cannotThrow(node.value, alias) && all(node.list);
    case "scalar_conditional_expression":
      return (
        cannotThrow(node.test, alias) &&
        cannotThrow(node.consequent, alias) &&
        cannotThrow(node.alternate, alias)
      );
    case "scalar_function_expression": {
      const name = functionName(node);
      const args = Array.isArray(node.arguments) ? node.arguments : [];
      const arities = name === undefined || node.udf ? undefined : SAFE_FUNCTIONS[name];
      return arities !== undefined && arities.includes(args.length) && all(args);
    }
    default:
      // BETWEEN (plain JavaScript comparisons, which can call a document object's valueOf), subqueries, UDFs, ...
      return false;
  }
}

/** The conditions ANDed at the top of a WHERE, as the engine's `$h.and` chains them. */
function conjuncts(condition: SqlNode): SqlNode[] {
  if (condition.type === "scalar_binary_expression" && condition.operator === "AND") {
    return [condition.left, condition.right].filter(isNode).flatMap(conjuncts);
  }
  return [condition];
}

/** The keys of a path under the root alias (`c.a["b"][0]` is a, b, 0), else undefined. */
function pathOf(node: SqlNode, alias: string): Key[] | undefined {
  if (node.type === "identifier") return node.name === alias ? [] : undefined;
  if (node.type !== "scalar_member_expression" || !isNode(node.object) || !isNode(node.property))
    return undefined;
  const parent = pathOf(node.object, alias);
  if (!parent) return undefined;
  const { property } = node;
  if (!node.computed) return typeof property.name === "string" ? [...parent, property.name] : undefined;
  if (property.type === "string_constant" && typeof property.value === "string")
    return [...parent, property.value];
  if (property.type === "number_constant" && typeof property.value === "number")
    return [...parent, property.value];
  return undefined;
}

/** The value at `keys`, as the engine's generated code reads members: `typeof o === "object" && o ? o[k]`. */
function valueAt(document: unknown, keys: readonly Key[]): unknown {
  let value = document;
  for (const key of keys) {
    value = typeof value === "object" && value !== null ? (value as Record<Key, unknown>)[key] : undefined;
  }
  return value;
}

const NOT_A_KEY = Symbol("not a comparable constant");

/** A string, finite number, boolean or null: the values whose engine comparisons are plain `===`. */
function primitive(value: unknown): Primitive | typeof NOT_A_KEY {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number" && !Number.isNaN(value)) return value;
  return NOT_A_KEY;
}

/** A constant or a parameter given with the query, as the engine reads it; NOT_A_KEY otherwise. */
function constantValue(node: SqlNode, parameters: ParameterValues): unknown {
  switch (node.type) {
    case "string_constant":
    case "number_constant":
    case "boolean_constant":
      return node.value;
    case "null_constant":
      return null;
    case "parameter_name": {
      const name = typeof node.name === "string" ? node.name.slice(1) : undefined;
      return name !== undefined && Object.hasOwn(parameters, name) ? parameters[name] : NOT_A_KEY;
    }
    case "array_constant":
    case "scalar_array_expression": {
      if (!Array.isArray(node.elements) || !node.elements.every(isNode)) return NOT_A_KEY;
      const values = node.elements.map((element: SqlNode) => constantValue(element, parameters));
      return values.includes(NOT_A_KEY) ? NOT_A_KEY : values;
    }
    default:
      return NOT_A_KEY;
  }
}

/** A set of primitives for a membership test, or undefined when some value is not one. */
function keySet(values: unknown): Set<Primitive> | undefined {
  if (!Array.isArray(values)) return undefined;
  const keys = values.map(primitive);
  return keys.includes(NOT_A_KEY) ? undefined : new Set(keys as Primitive[]);
}

type ConditionTest = (parameters: ParameterValues) => DocumentTest | undefined;

const FLIPPED: Readonly<Record<string, string>> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

function comparison(keys: Key[], operator: string, bound: unknown): DocumentTest | undefined {
  // The engine compares values of one type only, never objects: a string with a string, a number with a number.
  if (typeof bound !== "string" && (typeof bound !== "number" || Number.isNaN(bound))) return undefined;
  const type = typeof bound;
  const b = bound as string | number;
  switch (operator) {
    case "<":
      return (d) => {
        const v = valueAt(d, keys);
        return typeof v === type && (v as typeof b) < b;
      };
    case "<=":
      return (d) => {
        const v = valueAt(d, keys);
        return typeof v === type && (v as typeof b) <= b;
      };
    case ">":
      return (d) => {
        const v = valueAt(d, keys);
        return typeof v === type && (v as typeof b) > b;
      };
    case ">=":
      return (d) => {
        const v = valueAt(d, keys);
        return typeof v === type && (v as typeof b) >= b;
      };
    default:
      return undefined;
  }
}

/** The test of one ANDed condition, when it is one of the forms this file knows; else undefined. */
function conditionTest(node: SqlNode, alias: string): ConditionTest | undefined {
  if (node.type === "scalar_binary_expression" && isNode(node.left) && isNode(node.right)) {
    const operator = String(node.operator);
    const leftPath = pathOf(node.left, alias);
    const rightPath = pathOf(node.right, alias);
    if ((leftPath === undefined) === (rightPath === undefined)) return undefined;
    const keys = (leftPath ?? rightPath) as Key[];
    const other = leftPath ? node.right : node.left;
    if (operator === "=") {
      return (parameters) => {
        const key = primitive(constantValue(other, parameters));
        return key === NOT_A_KEY ? undefined : (d) => valueAt(d, keys) === key;
      };
    }
    const ordered = leftPath ? operator : FLIPPED[operator];
    if (ordered === undefined) return undefined;
    return (parameters) => comparison(keys, ordered, constantValue(other, parameters));
  }
  if (node.type === "scalar_in_expression" && isNode(node.value)) {
    const keys = pathOf(node.value, alias);
    if (!keys) return undefined;
    const list = nodes(node.list);
    return (parameters) => {
      const set = keySet(list.map((item) => constantValue(item, parameters)));
      return set && ((d) => set.has(valueAt(d, keys) as Primitive));
    };
  }
  if (node.type === "scalar_function_expression" && !node.udf) {
    const name = functionName(node);
    const args = nodes(node.arguments);
    if (name === "ARRAY_CONTAINS") {
      const [array, value, partial] = args;
      const keys = value && pathOf(value, alias);
      // A third argument other than a boolean constant makes the engine answer undefined: no narrowing then.
      if (!array || !keys || (partial !== undefined && partial.type !== "boolean_constant")) return undefined;
      return (parameters) => {
        const set = keySet(constantValue(array, parameters));
        return set && ((d) => set.has(valueAt(d, keys) as Primitive));
      };
    }
    const typeTest = name === undefined ? undefined : TYPE_TESTS[name];
    const keys = args.length === 1 && args[0] ? pathOf(args[0], alias) : undefined;
    if (typeTest && keys) return () => (d) => typeTest(valueAt(d, keys));
    return undefined;
  }
  if (node.type === "scalar_unary_expression" && node.operator === "NOT" && isNode(node.argument)) {
    const { argument } = node;
    const name =
      argument.type === "scalar_function_expression" && !argument.udf ? functionName(argument) : undefined;
    const typeTest = name === undefined ? undefined : TYPE_TESTS[name];
    const args = nodes(argument.arguments);
    const keys = args.length === 1 && args[0] ? pathOf(args[0], alias) : undefined;
    if (typeTest && keys) return () => (d) => !typeTest(valueAt(d, keys));
  }
  return undefined;
}

/**
 * The candidate filter of a parsed query (the engine's `parse(sql).ast`), or undefined when none of its
 * conditions narrows safely and every document must go to the engine.
 */
export function candidateFilter(ast: unknown): CandidateFilter | undefined {
  const body = isNode(ast) ? ast.body : undefined;
  if (!isNode(body)) return undefined;
  const alias = rootAlias(body);
  const where = isNode(body.where) ? body.where.condition : undefined;
  if (alias === undefined || !isNode(where) || !cannotThrow(where, alias)) return undefined;
  const tests = conjuncts(where)
    .map((condition) => conditionTest(condition, alias))
    .filter((test): test is ConditionTest => test !== undefined);
  if (tests.length === 0) return undefined;
  return (parameters) => {
    const applicable = tests
      .map((test) => test(parameters))
      .filter((test): test is DocumentTest => test !== undefined);
    if (applicable.length === 0) return undefined;
    if (applicable.length === 1) return applicable[0];
    return (d) => applicable.every((test) => test(d));
  };
}
