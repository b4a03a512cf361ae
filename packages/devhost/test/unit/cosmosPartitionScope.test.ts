// The rewrite that scopes a query to the partition key its request names (the stand-in's server ignores the
// header): the condition lands in the top-level WHERE, whatever the query looks like around it.
import { describe, expect, it } from "vitest";
import {
  parsePartitionKeyHeader,
  PartitionScopeError,
  scopeQueryToPartition,
} from "../../src/emulators/cosmos/partitionScope";
import { topLevelClauses } from "../../src/emulators/cosmos/sqlClauses";

const scoped = (query: string, paths = ["/orderId"], key: unknown[] = ["A"]) =>
  scopeQueryToPartition({ query, parameters: [] }, paths, key as never);
const PK = { name: "@devhostPartitionKey0", value: "A" };

describe("top-level clauses of a query", () => {
  it("finds keywords outside strings, brackets, comments, property and parameter names", () => {
    const sql =
      "SELECT c.order, 'WHERE' FROM c -- ORDER BY\n WHERE EXISTS(SELECT VALUE t FROM t IN c.tags) AND c.group = @limit ORDER  BY c.from";
    expect(topLevelClauses(sql).map((c) => [c.keyword, sql.slice(c.start, c.end)])).toEqual([
      ["SELECT", "SELECT"],
      ["FROM", "FROM"],
      ["WHERE", "WHERE"],
      ["ORDER BY", "ORDER  BY"],
    ]);
    const paged = "SELECT c.s FROM c GROUP BY c.s OFFSET 1 LIMIT 2";
    expect(topLevelClauses(paged).map((c) => c.keyword)).toEqual([
      "SELECT",
      "FROM",
      "GROUP BY",
      "OFFSET",
      "LIMIT",
    ]);
  });
});

describe("scoping a query to a partition key", () => {
  it("adds a WHERE to a query that has none", () => {
    expect(scoped("SELECT * FROM c")).toEqual({
      query: 'SELECT * FROM c\nWHERE c["orderId"] = @devhostPartitionKey0',
      parameters: [PK],
    });
  });

  it("ANDs the filter onto an existing WHERE, keeping the query's own precedence, before ORDER BY", () => {
    expect(scoped("SELECT * FROM c WHERE c.a = 1 OR c.b = 2 ORDER BY c.n").query).toBe(
      'SELECT * FROM c WHERE (c["orderId"] = @devhostPartitionKey0) AND (c.a = 1 OR c.b = 2\n) ORDER BY c.n',
    );
  });

  it("uses the FROM alias, and leaves JOINs, TOP and keyword-like names alone", () => {
    const query = "SELECT TOP 3 r.id FROM root r JOIN t IN r.tags WHERE t = 'where' ORDER BY r.rank DESC";
    expect(scoped(query).query).toBe(
      `SELECT TOP 3 r.id FROM root r JOIN t IN r.tags WHERE (r["orderId"] = @devhostPartitionKey0) AND (t = 'where'\n) ORDER BY r.rank DESC`,
    );
  });

  it("puts the WHERE before ORDER BY in any letter case, with subqueries left as they are", () => {
    expect(scoped("select * from c order by c.n").query).toBe(
      'select * from c\nWHERE c["orderId"] = @devhostPartitionKey0 order by c.n',
    );
    expect(scoped("SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'x')").query).toBe(
      `SELECT * FROM c WHERE (c["orderId"] = @devhostPartitionKey0) AND (EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'x')\n)`,
    );
  });

  it("is not cut short by a trailing comment", () => {
    expect(scoped("SELECT VALUE COUNT(1) FROM c -- all").query).toBe(
      'SELECT VALUE COUNT(1) FROM c -- all\nWHERE c["orderId"] = @devhostPartitionKey0',
    );
    expect(scoped("SELECT * FROM c WHERE c.a = 1 -- one").query).toBe(
      'SELECT * FROM c WHERE (c["orderId"] = @devhostPartitionKey0) AND (c.a = 1 -- one\n)',
    );
  });

  it("keeps the query's parameters and adds one per partition key path; the none key means undefined", () => {
    const result = scopeQueryToPartition(
      { query: "SELECT * FROM c WHERE c.x = @x", parameters: [{ name: "@x", value: 1 }] },
      ["/tenant", "/site/id"],
      [undefined, 7],
    );
    expect(result).toEqual({
      query:
        'SELECT * FROM c WHERE (NOT IS_DEFINED(c["tenant"]) AND c["site"]["id"] = @devhostPartitionKey1) AND (c.x = @x\n)',
      parameters: [
        { name: "@x", value: 1 },
        { name: "@devhostPartitionKey1", value: 7 },
      ],
    });
  });

  it("leaves a query without FROM as it is", () => {
    expect(scoped("SELECT 1")).toEqual({ query: "SELECT 1", parameters: [] });
  });

  it("refuses what it cannot scope instead of running a different query", () => {
    expect(() => scoped("SELECT * FROM c IN c.children")).toThrow(PartitionScopeError);
    expect(() => scoped("SELECT * FROM c", ["/a"], ["A", "B"])).toThrow(PartitionScopeError);
  });
});

describe("the partition key header", () => {
  it("is a JSON array of components, {} standing for the none key", () => {
    expect(parsePartitionKeyHeader('["A"]')).toEqual(["A"]);
    expect(parsePartitionKeyHeader("[1, null, true]")).toEqual([1, null, true]);
    expect(parsePartitionKeyHeader("[{}]")).toEqual([undefined]);
    expect(parsePartitionKeyHeader("[]")).toBeUndefined();
    expect(parsePartitionKeyHeader(undefined)).toBeUndefined();
    expect(() => parsePartitionKeyHeader("[[1]]")).toThrow(PartitionScopeError);
  });
});
