/**
 * The stand-in's document queries, run with @zeit/cosmosdb-query's own parser, code generator and runtime
 * helpers, so they answer what the server alone answers, at a cost that follows the documents a query can match
 * rather than the square of the container:
 *
 *  - The engine's generated code gathers the documents with `coll.reduce(($, c) => [...$, { c }], [])`, which
 *    copies the array once per document: a query over n documents costs O(n²) (measured on the engine alone:
 *    0.1 s at 10,000 documents, 9 s at 20,000, 31 s at 30,000). Each such `reduce` is rewritten to the
 *    `flatMap` it equals, in the engine's JavaScript syntax tree before the code is generated
 *    (`linearCollections`).
 *  - The server compiles the generated code with `new Function` for every request; here it is compiled once per
 *    query text and kept.
 *  - Documents that cannot match the WHERE are left out before the engine runs (queryCandidates.ts).
 *  - A page is stripped of `undefined` in linear time, not by copying it once per row (queryHelpers.ts).
 */
// @ts-expect-error -- @babel/generator 7.6.2, the engine's own code generator, ships no types (used as below).
import generateUntyped from "@babel/generator";
import parseQuery from "@zeit/cosmosdb-query";
import * as aggregateFunctions from "@zeit/cosmosdb-query/lib/aggregate-functions";
import * as builtinFunctions from "@zeit/cosmosdb-query/lib/builtin-functions";
import type * as helpers from "@zeit/cosmosdb-query/lib/helpers";
import transform from "@zeit/cosmosdb-query/lib/transformer";
import type { CompositeIndex } from "@zeit/cosmosdb-query/lib/types";
import { candidateFilter, type CandidateFilter, type ParameterValues } from "./queryCandidates";
import { QUERY_HELPERS } from "./queryHelpers";

export interface QueryParameters {
  parameters?: { name: string; value: unknown }[] | undefined;
  udf?: Record<string, unknown> | null | undefined;
  maxItemCount?: number | null | undefined;
  continuation?: { token: string } | null | undefined;
  compositeIndexes?: CompositeIndex[][] | undefined;
}

/** What the engine's generated code returns: the page of results and, when more follow, the next token. */
export interface QueryResult {
  result: unknown[];
  continuation: { token: string; range: { min: string; max: string } } | null;
}

type Execute = (
  aggregate: typeof aggregateFunctions,
  builtin: typeof builtinFunctions,
  collection: unknown[],
  runtime: typeof helpers,
  udf: Record<string, unknown>,
  parameters: ParameterValues,
  maxItemCount: number | null | undefined,
  continuation: { token: string } | null | undefined,
  compositeIndexes: CompositeIndex[][] | undefined,
) => QueryResult;

/** A parsed query: the engine's Query object, and what is built from it on first use. */
export interface CompiledQuery {
  /** The engine's parsed query (for `containsPartitionKeys`). */
  query: ReturnType<typeof parseQuery>;
  candidates: CandidateFilter | undefined;
  execute?: Execute;
}

interface JsNode {
  type: string;
  [field: string]: unknown;
}

const isJsNode = (value: unknown): value is JsNode =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

const generate = generateUntyped as (ast: unknown) => { code: string };

const ACCUMULATOR = "$";

const isAccumulator = (node: unknown): boolean =>
  isJsNode(node) && node.type === "Identifier" && node.name === ACCUMULATOR;

/** `[...$, a, b]`: the accumulator followed by what one element adds. */
function appendsToAccumulator(node: unknown): node is JsNode & { elements: unknown[] } {
  if (!isJsNode(node) || node.type !== "ArrayExpression" || !Array.isArray(node.elements)) return false;
  const [first] = node.elements as unknown[];
  return isJsNode(first) && first.type === "SpreadElement" && isAccumulator(first.argument);
}

/** Whether `node` reads the accumulator `$` (a nested arrow function with its own `$` parameter does not). */
function readsAccumulator(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(readsAccumulator);
  if (!isJsNode(node)) return false;
  if (isAccumulator(node)) return true;
  if (
    node.type === "ArrowFunctionExpression" &&
    Array.isArray(node.params) &&
    node.params.some(isAccumulator)
  )
    return false;
  return Object.entries(node).some(([key, value]) => key !== "type" && readsAccumulator(value));
}

/**
 * `xs.reduce(($, p) => [...$, A], [])` as `xs.flatMap((p) => [A])`, and `xs.reduce(($, p) => T ? [...$, A] : $,
 * [])` as `xs.flatMap((p) => T ? [A] : [])`: the same elements in the same order (flatMap adds the elements of
 * the array each call returns, as the spread did), without copying the accumulator for every element. Any other
 * reduce, or one whose body reads `$` elsewhere, is left as it is.
 */
function linearForm(node: JsNode): JsNode | undefined {
  if (node.type !== "CallExpression" || !Array.isArray(node.arguments) || node.arguments.length !== 2)
    return undefined;
  const callee = node.callee;
  if (!isJsNode(callee) || callee.type !== "MemberExpression" || callee.computed) return undefined;
  if (
    !isJsNode(callee.property) ||
    callee.property.type !== "Identifier" ||
    callee.property.name !== "reduce"
  )
    return undefined;
  const [fn, initial] = node.arguments as unknown[];
  if (
    !isJsNode(initial) ||
    initial.type !== "ArrayExpression" ||
    (initial.elements as unknown[]).length !== 0
  )
    return undefined;
  if (!isJsNode(fn) || fn.type !== "ArrowFunctionExpression" || !Array.isArray(fn.params)) return undefined;
  const [accumulator, element, ...more] = fn.params as unknown[];
  if (!isAccumulator(accumulator) || element === undefined || more.length > 0) return undefined;

  const added = (array: JsNode & { elements: unknown[] }): JsNode => ({
    type: "ArrayExpression",
    elements: array.elements.slice(1),
  });
  let body: JsNode;
  if (appendsToAccumulator(fn.body)) {
    body = added(fn.body);
  } else if (
    isJsNode(fn.body) &&
    fn.body.type === "ConditionalExpression" &&
    appendsToAccumulator(fn.body.consequent) &&
    isAccumulator(fn.body.alternate)
  ) {
    body = {
      type: "ConditionalExpression",
      test: fn.body.test,
      consequent: added(fn.body.consequent),
      alternate: { type: "ArrayExpression", elements: [] },
    };
  } else {
    return undefined;
  }
  if (readsAccumulator(body)) return undefined;
  return {
    type: "CallExpression",
    callee: { ...callee, property: { type: "Identifier", name: "flatMap" } },
    arguments: [{ type: "ArrowFunctionExpression", params: [element], body }],
  };
}

/** Rewrites, in place and innermost first, every accumulating reduce of the engine's syntax tree. */
export function linearCollections(node: unknown): number {
  let rewritten = 0;
  if (Array.isArray(node)) {
    for (const child of node) rewritten += linearCollections(child);
    return rewritten;
  }
  if (!isJsNode(node)) return 0;
  for (const [key, value] of Object.entries(node)) if (key !== "type") rewritten += linearCollections(value);
  const linear = linearForm(node);
  if (linear) {
    for (const key of Object.keys(node)) delete node[key];
    Object.assign(node, linear);
    rewritten += 1;
  }
  return rewritten;
}

/** The generated code of a parsed query with its collections gathered in linear time. */
export function linearCode(ast: unknown): string {
  const program = transform(structuredClone(ast) as Record<string, unknown>);
  linearCollections(program);
  return generate(program).code;
}

/** As the engine's executor compiles the code, which it does for every request. */
const compile = (ast: unknown): Execute =>
  new Function(`"use strict";return (${linearCode(ast)})`)() as Execute;

/** The query's candidate filter; none (every document goes to the engine) should deriving it ever fail. */
function candidatesOf(ast: unknown): CandidateFilter | undefined {
  try {
    return candidateFilter(ast);
  } catch {
    return undefined;
  }
}

/** Compiled queries by text, most recently used last; the server keeps 100 parsed queries per container. */
const cache = new Map<string, CompiledQuery>();
const CACHE_SIZE = 500;

/** The parsed query for `sql`; throws the engine's SyntaxError, as the server's parse does. */
export function compiledQuery(sql: string): CompiledQuery {
  const cached = cache.get(sql);
  if (cached) {
    cache.delete(sql);
    cache.set(sql, cached);
    return cached;
  }
  const query = parseQuery(sql);
  const compiled: CompiledQuery = {
    query,
    candidates: candidatesOf(query.ast),
  };
  cache.set(sql, compiled);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return compiled;
}

/** `@name` → value, as the engine's executor builds its parameter object. */
export function parameterValues(parameters: QueryParameters["parameters"]): ParameterValues {
  const values: ParameterValues = {};
  for (const { name, value } of parameters ?? []) values[name.slice(1)] = value;
  return values;
}

/**
 * Runs a compiled query over `documents` (the container's, in the server's order) as the engine's `exec` does.
 * Errors of the engine at run time propagate as they are (the server turns them into a 400).
 */
export function runQuery(
  compiled: CompiledQuery,
  documents: Iterable<unknown>,
  { parameters, udf, maxItemCount, continuation, compositeIndexes }: QueryParameters = {},
): QueryResult {
  const values = parameterValues(parameters);
  const candidate = compiled.candidates?.(values);
  const collection: unknown[] = [];
  for (const document of documents) if (!candidate || candidate(document)) collection.push(document);
  compiled.execute ??= compile(compiled.query.ast);
  return compiled.execute(
    aggregateFunctions,
    builtinFunctions,
    collection,
    QUERY_HELPERS,
    // The engine's executor defaults only a missing udf map.
    udf === undefined ? {} : (udf as Record<string, unknown>),
    values,
    maxItemCount,
    continuation,
    compositeIndexes,
  );
}
