import { describe, expect, it } from "vitest";
import { withGeneratedSections } from "../../../tools/docSections";

describe("withGeneratedSections", () => {
  const page = "# Page\n<!-- generated:a -->\nold\n<!-- /generated:a -->\nrest\n";

  it("replaces what is between a section's markers, and nothing else", () => {
    expect(withGeneratedSections(page, { a: "new" }, "page.md")).toBe(
      "# Page\n<!-- generated:a -->\nnew\n<!-- /generated:a -->\nrest\n",
    );
  });

  it("keeps a body's dollar signs as written (prices), not as replacement patterns", () => {
    expect(withGeneratedSections(page, { a: "$1 and $& cost $0.25" }, "page.md")).toContain(
      "<!-- generated:a -->\n$1 and $& cost $0.25\n<!-- /generated:a -->",
    );
  });

  it("refuses a section whose markers are missing", () => {
    expect(() => withGeneratedSections(page, { b: "x" }, "page.md")).toThrow(
      "page.md lacks the markers of section b",
    );
  });
});
