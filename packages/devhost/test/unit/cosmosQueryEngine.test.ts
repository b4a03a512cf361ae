// The stand-in's query executor (queryEngine.ts, queryCandidates.ts) against the query engine it replaces,
// @zeit/cosmosdb-query's own `exec`: over a container of varied documents (fields missing, null, of other types,
// nested, arrays), every query below gives the same pages, continuation tokens and errors both ways, for
// several page sizes, whether or not its WHERE lets documents be left out before the engine runs. A document left
// out that the engine would have returned, or on which it would have failed, changes some answer below; keeping
// one the WHERE rejects changes none (the engine still evaluates the whole WHERE), it only costs time.
import { describe, expect, it } from "vitest";
import parseQuery from "@zeit/cosmosdb-query";
import {
  compiledQuery,
  linearCode,
  runQuery,
  type QueryParameters,
  type QueryResult,
} from "../../src/emulators/cosmos/queryEngine";

/** A small deterministic generator (mulberry32), so that a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATES = ["Pending", "Processing", "Compensating", "Processed", "Error"];
const DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"];

/** Documents as the server keeps them: each with its `_rid`, in insertion order. */
function container(size: number, seed: number): Record<string, unknown>[] {
  const next = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const sometimes = <T>(value: T, other: unknown = undefined): unknown => (next() < 0.85 ? value : other);
  return Array.from({ length: size }, (_, i) => {
    const day = `${pick(DAYS)}T0${Math.floor(next() * 4)}:00:00.000Z`;
    const document: Record<string, unknown> = {
      id: `doc-${i}`,
      orderId: `order-${i % 37}`,
      _rid: `rid${String(i).padStart(6, "0")}`,
      processState: sometimes(pick(STATES), pick([null, 3, true, undefined, ["Pending"]])),
      createdAt: sometimes(day, pick([null, 20260101, undefined])),
      completeBy: sometimes(day, undefined),
      updatedAt: day,
      lockedBy: next() < 0.5 ? null : `holder-${i % 3}`,
      n: sometimes(Math.floor(next() * 10), pick(["5", null, undefined])),
      tags: sometimes(
        Array.from({ length: Math.floor(next() * 3) }, () => pick(["a", "b", "c"])),
        undefined,
      ),
      lastError: sometimes({ code: pick(["Timeout", "Refused"]), message: `failed ${i}` }, null),
      alert:
        next() < 0.3
          ? {
              kind: pick(STATES),
              decidedAt: day,
              sentAt: next() < 0.5 ? null : day,
            }
          : pick([null, undefined]),
      retryAt: sometimes(day, null),
    };
    for (const key of Object.keys(document)) if (document[key] === undefined) delete document[key];
    return document;
  });
}

const COMPOSITE_INDEXES: NonNullable<QueryParameters["compositeIndexes"]> = [
  [
    { path: "/processState", order: "ascending" },
    { path: "/createdAt", order: "ascending" },
  ],
  [
    { path: "/processState", order: "ascending" },
    { path: "/completeBy", order: "ascending" },
  ],
  [
    { path: "/updatedAt", order: "descending" },
    { path: "/id", order: "descending" },
  ],
];

const p = (name: string, value: unknown) => ({ name, value });
const NOW = "2026-01-02T02:00:00.000Z";

interface Case {
  query: string;
  parameters?: { name: string; value: unknown }[];
  /** Whether the WHERE leaves documents out before the engine runs. */
  narrowed: boolean;
}

const CASES: Case[] = [
  // The app's own queries (src/store/stateStore.ts) and a partition-scoped one as the gateway rewrites it.
  {
    query:
      "SELECT * FROM c WHERE c.processState IN (@state0, @state1) AND IS_NULL(c.lockedBy) " +
      "AND (IS_NULL(c.retryAt) OR c.retryAt <= @now) ORDER BY c.processState ASC, c.createdAt ASC",
    parameters: [p("@state0", "CompensationPending"), p("@state1", "Pending"), p("@now", NOW)],
    narrowed: true,
  },
  {
    query:
      "SELECT * FROM c WHERE c.processState IN (@state0, @state1) " +
      "AND c.completeBy <= @now AND c.completeBy >= @windowStart ORDER BY c.processState ASC, c.completeBy ASC",
    parameters: [
      p("@state0", "Compensating"),
      p("@state1", "Processing"),
      p("@now", NOW),
      p("@windowStart", "2026-01-01T01:00:00.000Z"),
    ],
    narrowed: true,
  },
  {
    query:
      "SELECT TOP 1 VALUE c.createdAt FROM c WHERE c.processState = 'Pending' " +
      "ORDER BY c.processState ASC, c.createdAt ASC",
    narrowed: true,
  },
  {
    query:
      "SELECT TOP 5 * FROM c WHERE IS_DEFINED(c.alert) AND NOT IS_NULL(c.alert) " +
      "AND IS_NULL(c.alert.sentAt) AND c.alert.decidedAt <= @decidedBefore AND c.alert.kind = c.processState",
    parameters: [p("@decidedBefore", NOW)],
    narrowed: true,
  },
  {
    query: "SELECT TOP 11 * FROM c WHERE c.processState = @state ORDER BY c.updatedAt DESC, c.id DESC",
    parameters: [p("@state", "Processed")],
    narrowed: true,
  },
  {
    query:
      "SELECT TOP 11 * FROM c WHERE c.lastError.code = @errorCode AND c.updatedAt >= @since " +
      "AND (c.updatedAt < @after OR (c.updatedAt = @after AND c.id < @afterId)) ORDER BY c.updatedAt DESC, c.id DESC",
    parameters: [
      p("@errorCode", "Timeout"),
      p("@since", "2026-01-01T02:00:00.000Z"),
      p("@after", "2026-01-03T01:00:00.000Z"),
      p("@afterId", "doc-150"),
    ],
    narrowed: true,
  },
  { query: "SELECT TOP 11 * FROM c ORDER BY c.updatedAt DESC, c.id DESC", narrowed: false },
  { query: "SELECT VALUE COUNT(1) FROM c", narrowed: false },
  {
    query: "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(@states, c.processState)",
    parameters: [p("@states", ["Pending", "Error"])],
    narrowed: true,
  },
  {
    query:
      "SELECT VALUE COUNT(1) FROM c WHERE c.processState = 'Error' AND c.updatedAt >= @since " +
      "AND CONTAINS(c.lastError.message, @marker)",
    parameters: [p("@since", "2026-01-02"), p("@marker", "1")],
    narrowed: true,
  },
  {
    query: 'SELECT * FROM c WHERE c["orderId"] = @devhostPartitionKey0 AND (c.n > 3)',
    parameters: [p("@devhostPartitionKey0", "order-5")],
    narrowed: true,
  },
  // Each form of condition, with constants, parameters, and values of other types than the documents'.
  { query: "SELECT * FROM c WHERE c.n = 5", narrowed: true },
  { query: "SELECT * FROM c WHERE 5 = c.n", narrowed: true },
  { query: "SELECT * FROM c WHERE c.n = '5'", narrowed: true },
  { query: "SELECT * FROM c WHERE c.processState = null", narrowed: true },
  { query: "SELECT * FROM c WHERE c.processState = true", narrowed: true },
  { query: "SELECT * FROM c WHERE c.n = @n", parameters: [p("@n", 3)], narrowed: true },
  { query: "SELECT * FROM c WHERE c.n = @n", parameters: [p("@n", { a: 1 })], narrowed: false },
  { query: "SELECT * FROM c WHERE c.tags = @t", parameters: [p("@t", ["a"])], narrowed: false },
  { query: "SELECT * FROM c WHERE c.n = @missing", narrowed: false },
  { query: "SELECT * FROM c WHERE c.n IN (1, 2, '5', null)", narrowed: true },
  { query: "SELECT * FROM c WHERE c.n IN (1, @n)", parameters: [p("@n", [2])], narrowed: false },
  { query: "SELECT * FROM c WHERE c.n < 4", narrowed: true },
  { query: "SELECT * FROM c WHERE 4 <= c.n", narrowed: true },
  { query: "SELECT * FROM c WHERE c.n > '4'", narrowed: true },
  { query: "SELECT * FROM c WHERE c.createdAt >= @d", parameters: [p("@d", "2026-01-02")], narrowed: true },
  { query: "SELECT * FROM c WHERE c.createdAt > true", narrowed: false },
  { query: "SELECT * FROM c WHERE ARRAY_CONTAINS(['a', 3, null], c.processState)", narrowed: true },
  { query: "SELECT * FROM c WHERE ARRAY_CONTAINS(['Pending'], c.processState, true)", narrowed: true },
  {
    query: "SELECT * FROM c WHERE ARRAY_CONTAINS(@s, c.processState)",
    parameters: [p("@s", "x")],
    narrowed: false,
  },
  { query: "SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, 'a')", narrowed: false },
  { query: "SELECT * FROM c WHERE IS_DEFINED(c.alert)", narrowed: true },
  { query: "SELECT * FROM c WHERE NOT IS_DEFINED(c.alert)", narrowed: true },
  { query: "SELECT * FROM c WHERE IS_STRING(c.processState) AND NOT IS_NUMBER(c.n)", narrowed: true },
  { query: "SELECT * FROM c WHERE is_bool(c.processState)", narrowed: true },
  { query: "SELECT * FROM c WHERE c.tags[0] = 'a'", narrowed: true },
  { query: "SELECT * FROM c WHERE c.constructor = 'x' OR c.n = 1", narrowed: false },
  { query: "SELECT * FROM c WHERE IS_DEFINED(c.constructor) AND c.n = 2", narrowed: true },
  { query: "SELECT * FROM root r WHERE r.processState = 'Pending' ORDER BY r.createdAt", narrowed: true },
  { query: "SELECT r.id, r.n FROM root r WHERE r.n >= 2 AND r.n <= 6 ORDER BY r.n DESC", narrowed: true },
  { query: "SELECT * FROM c WHERE c.n = 1 OR c.n = 2", narrowed: false },
  { query: "SELECT * FROM c WHERE (c.n ?? 0) = 0 AND c.processState != 'Error'", narrowed: false },
  { query: "SELECT * FROM c WHERE (c.n > 2 ? c.processState : 'Pending') = 'Pending'", narrowed: false },
  { query: "SELECT * FROM c WHERE LOWER(c.processState) = 'pending' AND c.n >= 0", narrowed: true },
  // Not narrowed: the engine reads every document, as without the executor.
  { query: "SELECT * FROM c WHERE c.n BETWEEN 2 AND 5 AND c.processState = 'Pending'", narrowed: false },
  {
    query:
      "SELECT * FROM c WHERE c.processState = 'Pending' AND EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'a')",
    narrowed: false,
  },
  { query: "SELECT VALUE t FROM t IN c.tags", narrowed: false },
  {
    query: "SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE c.processState = 'Pending'",
    narrowed: false,
  },
  {
    query: "SELECT * FROM c WHERE c[@key] = 'Pending'",
    parameters: [p("@key", "processState")],
    narrowed: false,
  },
  { query: "SELECT VALUE ARRAY_LENGTH(t) FROM c.tags t", narrowed: false },
  { query: "SELECT e.code FROM c.lastError e WHERE e.code = 'Timeout'", narrowed: false },
  // Aggregates, projections, TOP, ORDER BY.
  { query: "SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)", narrowed: true },
  { query: "SELECT VALUE MAX(c.createdAt) FROM c WHERE c.processState = 'Processed'", narrowed: true },
  { query: "SELECT VALUE MIN(c.n) FROM c", narrowed: false },
  { query: "SELECT VALUE AVG(c.n) FROM c WHERE c.n > 0", narrowed: true },
  { query: "SELECT COUNT(1) AS n FROM c WHERE c.processState = 'Pending'", narrowed: true },
  { query: "SELECT TOP 3 c.id, c.lastError.code FROM c WHERE c.processState = 'Error'", narrowed: true },
  { query: "SELECT * FROM c ORDER BY c.createdAt", narrowed: false },
  { query: "SELECT * FROM c WHERE c.processState = 'Pending' ORDER BY c.createdAt DESC", narrowed: true },
  { query: "SELECT VALUE { s: c.processState, n: c.n } FROM c WHERE c.n = 1", narrowed: true },
  { query: "SELECT 1 AS one", narrowed: false },
  { query: "SELECT VALUE [c.n, c.missing, { a: c.missing, b: c.lastError }] FROM c", narrowed: false },
  // Errors, which must stay errors.
  { query: "SELECT * FROM c WHERE c.processState = 'Pending' ORDER BY c.n, c.createdAt", narrowed: true },
  { query: "SELECT * FROM c WHERE c.processState = 'Nothing' AND ABS(c.n, 1) = 1", narrowed: false },
  { query: "SELECT * FROM c WHERE c.processState = 'Nothing' AND udf.missing(c)", narrowed: false },
  { query: "SELECT * FROM c WHERE c.processState = 'Nothing' AND x = 1", narrowed: false },
];

const PAGE_SIZES = [undefined, 1, 7, 50];

interface Page {
  maxItemCount: number | undefined;
  continuation: { token: string } | undefined;
}

type Outcome = { pages: QueryResult[] } | { error: string };

/** Every page of a query, following its continuation tokens, or the error of the first failing page. */
function allPages(exec: (page: Page) => QueryResult, maxItemCount: number | undefined): Outcome {
  const pages: QueryResult[] = [];
  let continuation: { token: string } | undefined;
  try {
    do {
      const page = exec({ maxItemCount, continuation });
      pages.push(page);
      continuation = page.continuation ?? undefined;
    } while (continuation && pages.length < 1_000);
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
  return { pages };
}

const udf = { double: (v: unknown) => (typeof v === "number" ? v * 2 : undefined) };

describe("the stand-in's query executor answers what the query engine answers", () => {
  const documents = container(400, 20260102);

  for (const { query, parameters = [] } of CASES) {
    it(query, () => {
      for (const maxItemCount of PAGE_SIZES) {
        const options = { parameters, udf, compositeIndexes: COMPOSITE_INDEXES };
        const expected = allPages(
          (page) => parseQuery(query).exec(documents, { ...options, ...page }) as QueryResult,
          maxItemCount,
        );
        const actual = allPages(
          (page) => runQuery(compiledQuery(query), documents, { ...options, ...page }),
          maxItemCount,
        );
        expect(actual, `maxItemCount ${maxItemCount}`).toEqual(expected);
      }
    });
  }

  it("has cases that return rows, page, and fail", () => {
    const outcomes = CASES.map(({ query, parameters = [] }) =>
      allPages(
        (page) =>
          runQuery(compiledQuery(query), documents, {
            parameters,
            compositeIndexes: COMPOSITE_INDEXES,
            ...page,
          }),
        7,
      ),
    );
    const rows = outcomes.map((o) => ("pages" in o ? o.pages.flatMap((page) => page.result).length : -1));
    expect(rows.filter((n) => n > 7).length).toBeGreaterThan(20);
    expect(rows.filter((n) => n === -1).length).toBeGreaterThanOrEqual(4);
  });

  it("leaves documents out only for the queries whose WHERE allows it", () => {
    for (const { query, parameters = [], narrowed } of CASES) {
      const values = Object.fromEntries(parameters.map(({ name, value }) => [name.slice(1), value]));
      const test = compiledQuery(query).candidates?.(values);
      expect(test !== undefined, query).toBe(narrowed);
      if (test) expect(documents.filter(test).length, query).toBeLessThan(documents.length);
    }
  });

  it("uses a parameter only when it is given with the query, by its own name", () => {
    const sql = "SELECT * FROM c WHERE c.processState = @constructor";
    expect(compiledQuery(sql).candidates?.({})).toBeUndefined();
    expect(compiledQuery(sql).candidates?.({ constructor: "Pending" })).toBeDefined();
  });
});

describe("the generated code", () => {
  it("gathers the documents, and the rows of JOINs and sub-arrays, without copying what it gathered so far", () => {
    for (const sql of [
      "SELECT * FROM c WHERE c.n = 1",
      "SELECT VALUE t FROM t IN c.tags",
      "SELECT c.id, t AS tag, u AS other FROM c JOIN t IN c.tags JOIN u IN c.tags",
      "SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'a')",
    ]) {
      const code = linearCode(parseQuery(sql).ast);
      expect(code, sql).not.toMatch(/\.reduce\(/);
      expect(code, sql).toMatch(/\.flatMap\(/);
    }
  });
});
