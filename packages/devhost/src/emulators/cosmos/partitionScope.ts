/**
 * Scopes a query to one partition key value, as Cosmos DB does when a query carries the partition key header
 * (`x-ms-documentdb-partitionkey`, a client's `partitionKey` request option). The stand-in's server ignores
 * that header and would return every partition, so the gateway rewrites the query to filter on the partition
 * key path itself: `WHERE <alias>["orderId"] = @pk AND (<the query's own condition>)`.
 *
 * The query engine's parser keeps no source positions, so the text is cut at the top-level clauses
 * (sqlClauses.ts) and the result is parsed again: it must be the original query with exactly that condition
 * added, else the rewrite is refused rather than run with a different meaning.
 */
import { isDeepStrictEqual } from "node:util";
import { compiledQuery } from "./queryEngine";
import { topLevelClauses } from "./sqlClauses";

/** One component of a partition key header value; `undefined` is the "none" key (`{}` on the wire). */
export type PartitionKeyComponent = string | number | boolean | null | undefined;

export interface QueryParameter {
  name: string;
  value: unknown;
}

export interface ScopedQuery {
  query: string;
  parameters: QueryParameter[];
}

export class PartitionScopeError extends Error {
  override name = "PartitionScopeError";
}

/** A prefix no client parameter is expected to use; numbered per partition key path. */
const PARAMETER_PREFIX = "@devhostPartitionKey";

interface Condition {
  type: string;
  [field: string]: unknown;
}

interface QueryAst {
  body?: {
    from?: {
      source: {
        expression: { type: string; expression?: { type: string; name?: string } };
        alias?: { name: string } | null;
        iteration?: boolean;
      };
    };
    where?: { type: string; condition: Condition };
  };
}

/** The parse the engine keeps for its own runs of `sql`: read-only here (`expected` below is a copy). */
const astOf = (sql: string): QueryAst => compiledQuery(sql).query.ast as QueryAst;

function parsedOrUndefined(sql: string): QueryAst | undefined {
  try {
    return astOf(sql);
  } catch {
    return undefined;
  }
}

/**
 * Parses an `x-ms-documentdb-partitionkey` header: a JSON array with one component per partition key path,
 * `{}` standing for the "none" key. Undefined when the header is absent or names no component.
 */
export function parsePartitionKeyHeader(header: string | undefined): PartitionKeyComponent[] | undefined {
  if (header === undefined || header === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(header);
  } catch {
    throw new PartitionScopeError(`The partition key header is not JSON: ${header}`);
  }
  const components = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  if (components.length === 0) return undefined;
  return components.map((component) => {
    if (component === null || ["string", "number", "boolean"].includes(typeof component)) {
      return component as PartitionKeyComponent;
    }
    if (typeof component === "object" && Object.keys(component).length === 0) return undefined;
    throw new PartitionScopeError(`Unsupported partition key component in ${header}`);
  });
}

/** `c["a"]["b"]` for the path `/a/b` on the alias `c`. */
function memberExpression(alias: string, path: string): string {
  const segments = path.split("/").slice(1);
  return alias + segments.map((segment) => `[${JSON.stringify(segment)}]`).join("");
}

/** The query's root alias (`c` in `FROM c` and `FROM root c`), or undefined when it has no FROM. */
function rootAlias(ast: QueryAst): string | undefined {
  const from = ast.body?.from;
  if (!from) return undefined;
  const { expression, alias, iteration } = from.source;
  const plainCollection =
    expression.type === "collection_expression" && expression.expression?.type === "identifier" && !iteration;
  if (!plainCollection) {
    throw new PartitionScopeError(
      "The Cosmos DB stand-in can scope a query to a partition key only when it reads from the container " +
        "itself (FROM c, FROM root c), not from a sub-array (FROM x IN c.items)",
    );
  }
  return alias?.name ?? expression.expression?.name;
}

export function scopeQueryToPartition(
  spec: ScopedQuery,
  partitionKeyPaths: readonly string[],
  partitionKey: readonly PartitionKeyComponent[],
): ScopedQuery {
  if (partitionKey.length > partitionKeyPaths.length) {
    throw new PartitionScopeError(
      `The partition key has ${partitionKey.length} components; the container defines ${partitionKeyPaths.length}`,
    );
  }
  const original = astOf(spec.query);
  const alias = rootAlias(original);
  if (alias === undefined) return spec;

  const parameters = [...spec.parameters];
  const filters = partitionKey.map((value, i) => {
    const member = memberExpression(alias, partitionKeyPaths[i] ?? "");
    if (value === undefined) return `NOT IS_DEFINED(${member})`;
    const name = `${PARAMETER_PREFIX}${i}`;
    parameters.push({ name, value });
    return `${member} = ${name}`;
  });
  const filter = filters.join(" AND ");
  const query = withFilter(spec.query, filter);

  const expected = structuredClone(original);
  const filterCondition = astOf(`SELECT * FROM ${alias} WHERE ${filter}`).body?.where?.condition;
  if (!expected.body || !filterCondition)
    throw new PartitionScopeError(`Cannot scope the query: ${spec.query}`);
  const own = original.body?.where?.condition;
  expected.body.where = {
    type: "filter_condition",
    condition: own
      ? { type: "scalar_binary_expression", left: filterCondition, operator: "AND", right: own }
      : filterCondition,
  };
  if (!isDeepStrictEqual(parsedOrUndefined(query), expected)) {
    throw new PartitionScopeError(
      `The Cosmos DB stand-in cannot scope this query to a partition key: ${spec.query}`,
    );
  }
  return { query, parameters };
}

/**
 * The query text with `filter` ANDed onto its WHERE, or a WHERE added after its FROM. A line break goes before
 * each insertion's end, so that a `--` comment at the end of the original text cannot swallow it.
 */
function withFilter(sql: string, filter: string): string {
  const clauses = topLevelClauses(sql);
  const fromIndex = clauses.findIndex((c) => c.keyword === "FROM");
  const after = clauses.slice(fromIndex + 1);
  const where = after.find((c) => c.keyword === "WHERE");
  const tail = after.find((c) => c.keyword !== "WHERE" && (!where || c.start > where.start));
  const tailStart = tail?.start ?? sql.length;
  if (where) {
    const condition = sql.slice(where.end, tailStart).trim();
    return `${sql.slice(0, where.end)} (${filter}) AND (${condition}\n) ${sql.slice(tailStart)}`.trimEnd();
  }
  return `${sql.slice(0, tailStart).trimEnd()}\nWHERE ${filter} ${sql.slice(tailStart)}`.trimEnd();
}
