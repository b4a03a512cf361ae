/**
 * The gateway's answer to a query plan request (`x-ms-cosmos-is-query-plan-request: True`). A client that runs
 * queries across partitions itself (the .NET SDK always does, in Gateway mode off Windows) first asks for the
 * plan: which partition key ranges to query and what it must do with the pages (merge-sort, aggregate, TOP).
 *
 * The stand-in has a single partition key range covering every value (its pkranges feed says so), and its
 * server evaluates ORDER BY, TOP, aggregates and DISTINCT over the whole container. So the honest plan is "one
 * range, nothing to do on the client": the client sends the query as written to that range and passes the
 * pages through. The query is still parsed, so that a syntax error is a 400 here as it is in Azure.
 */
import { compiledQuery } from "./queryEngine";

/** The whole hash space: the one range of the stand-in's pkranges feed ("" to "FF"). */
export const FULL_RANGE = { min: "", max: "FF", isMinInclusive: true, isMaxInclusive: false } as const;

export interface QueryPlan {
  partitionedQueryExecutionInfoVersion: number;
  queryInfo: Record<string, unknown>;
  queryRanges: (typeof FULL_RANGE)[];
}

/** Throws the engine's SyntaxError when the query does not parse. */
export function queryPlanFor(query: string): QueryPlan {
  const ast = compiledQuery(query).query.ast as { body?: { select?: { value?: unknown } } };
  return {
    partitionedQueryExecutionInfoVersion: 2,
    queryInfo: {
      distinctType: "None",
      top: null,
      offset: null,
      limit: null,
      orderBy: [],
      orderByExpressions: [],
      groupByExpressions: [],
      groupByAliases: [],
      aggregates: [],
      groupByAliasToAggregateType: {},
      rewrittenQuery: "",
      hasSelectValue: ast.body?.select?.value !== undefined,
      dCountInfo: null,
      hasNonStreamingOrderBy: false,
    },
    queryRanges: [FULL_RANGE],
  };
}
