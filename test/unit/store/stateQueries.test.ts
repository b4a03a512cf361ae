/**
 * Every query of the state store that sorts is served by a composite index of the state container, as Cosmos DB
 * needs: the ORDER BY names the filtered processState first and then equals one composite index, field by field
 * and direction by direction (or all directions reversed). The indexes are the ones infra/cosmos.bicep creates.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STATE_QUERIES } from "../../../src/store/stateQueries";

type IndexPath = { path: string; order: "ascending" | "descending" };

const stateContainer = (
  JSON.parse(readFileSync("infra/cosmos-emulator.config.json", "utf8")) as {
    databases: Array<{
      containers: Array<{ id: string; indexingPolicy: { compositeIndexes?: IndexPath[][] } }>;
    }>;
  }
).databases[0]!.containers.find((c) => c.id === "state")!;
const compositeIndexes = stateContainer.indexingPolicy.compositeIndexes ?? [];

/** The ORDER BY of a query as index paths: `c.updatedAt DESC` becomes { path: "/updatedAt", order: "descending" }. */
function orderBy(query: string): IndexPath[] {
  const clause = /ORDER BY (.+)$/i.exec(query)?.[1];
  if (!clause) return [];
  return clause.split(",").map((term) => {
    const [field, direction] = term.trim().split(/\s+/);
    return {
      path: `/${field!.replace(/^c\./, "")}`,
      order: direction?.toUpperCase() === "DESC" ? "descending" : "ascending",
    };
  });
}

const flip = (p: IndexPath): IndexPath => ({
  path: p.path,
  order: p.order === "ascending" ? "descending" : "ascending",
});
const same = (a: IndexPath[], b: IndexPath[]) => JSON.stringify(a) === JSON.stringify(b);

describe("the state store's sorted queries", () => {
  const sorted = Object.entries(STATE_QUERIES).filter(([, q]) => orderBy(q).length > 0);

  it.each(sorted)("%s is served by a composite index", (_name, query) => {
    const order = orderBy(query);
    const served = compositeIndexes.some((index) => same(index, order) || same(index, order.map(flip)));
    expect(served, `${query}\nindexes: ${JSON.stringify(compositeIndexes)}`).toBe(true);
  });

  it.each(sorted.filter(([, q]) => /WHERE[^]*c\.processState (IN|=)/.test(q)))(
    "%s names the processState it filters on first",
    (_name, query) => {
      expect(orderBy(query)[0]?.path).toBe("/processState");
    },
  );

  it("every composite index serves some query (none costs write RUs for nothing)", () => {
    const orders = sorted.map(([, q]) => orderBy(q));
    for (const index of compositeIndexes) {
      expect(
        orders.some((o) => same(index, o) || same(index, o.map(flip))),
        JSON.stringify(index),
      ).toBe(true);
    }
  });
});
