import { describe, expect, it } from "vitest";
import { validateOrder } from "../../../src/submission/submit";
import { sampleOrder } from "../../support/domain";
import { RAW_CONTROL } from "../../support/text";

const config = { statusQueuePrefix: "status-", statusQueues: ["status-demo"] };

describe("validateOrder, the reason of an InvalidOrder alert", () => {
  it.each([
    ["\\n", "\n"],
    ["\\r", "\r"],
    ["\\u2028", "\u2028"],
    ["\\u0085", "\u0085"],
  ])("is one line, escaped, when an unknown key holds %s", (escaped, raw) => {
    const forged = `a${raw}[alert] ALERT Error order=X`;
    const checked = validateOrder({ ...sampleOrder(), [forged]: 1 }, config);
    expect(checked.ok ? "accepted" : checked.reason).toBe(
      `(root): unknown field(s) a${escaped}[alert] ALERT Error order=X: expected only the fields of an order object`,
    );
    if (!checked.ok) expect(checked.reason).not.toMatch(RAW_CONTROL);
  });

  it("is one line, escaped, for a hostile replyTo, item key and code", () => {
    const checked = validateOrder(
      {
        ...sampleOrder({ currency: "\u202eRUE" }),
        items: [{ sku: "A", quantity: 1, unitPrice: 1, "x\u2029y": 2 }],
        replyTo: "status-\u0085",
      },
      config,
    );
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.reason).not.toMatch(RAW_CONTROL);
    expect(checked.reason).toContain("x\\u2029y");
    expect(checked.reason).toContain('"\\u202eRUE"');
  });
});
