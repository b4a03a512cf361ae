// The cost section's source and wording: the full run's profile wins over a small run's, the heading says
// which one it is, and the figures are worked out again from the profile (not copied from results.json), so a
// changed rule or price changes the page.
import { describe, expect, it } from "vitest";
import { costEntry, costSource, renderCostSection } from "../../../bench/costReport";
import { orderProfile, storeRow } from "../../support/orderProfiles";

const profile = (orders: number) =>
  orderProfile({
    orders,
    store: [storeRow({ kind: "PUT doc state", operation: "replace", perOrder: 8, meanDocumentBytes: 2048 })],
  });

const at = new Date("2026-12-01T12:00:00Z");

describe("the cost section", () => {
  it("is rendered from the full run's profile when there is one, else from the small run's", () => {
    const full = costEntry(profile(1_000), at);
    const small = costEntry(profile(100), at);
    expect(costSource({ cost: full, small: { cost: small } })).toEqual({ entry: full, small: false });
    expect(costSource({ small: { cost: small } })).toEqual({ entry: small, small: true });
    expect(costSource({ endToEnd: {} })).toBeUndefined();
  });

  it("says in its heading when the figures come from a small run", () => {
    const heading = (small: boolean) => renderCostSection(costEntry(profile(100), at), small).split("\n")[0];
    expect(heading(true)).toBe(
      "### Measured on 2026-12-01, 100 orders, from a `--small` run (the full run's figures replace these)",
    );
    expect(heading(false)).toBe("### Measured on 2026-12-01, 100 orders");
  });

  it("works the cost out from the profile, not from the figures stored beside it", () => {
    const entry = { ...costEntry(profile(1_000), at), ruPerOrder: 1 };
    // 8 replaces of 2 KB at 2 × 5.5 × (1 + 9/99) RU = 96 RU.
    expect(renderCostSection(entry, false)).toContain("| Request units | **96 RU** (state 96)");
  });
});
